#!/usr/bin/env node
// The `rrl` command. The TypeScript sources are compiled to dist/ by `npm install` (prepare) or `npm run build`.
// `rrl job exec` (the node side of a cluster job) loads only the training code, never the CLI
// and through it the harness's hidden evaluation.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const nodeJob = process.argv[2] === 'job' && process.argv[3] === 'exec' && !process.argv.includes('--help');
const entry = new URL(nodeJob ? '../dist/src/run/node-job.js' : '../dist/src/cli/index.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('rrl: dist/ is missing; run `npm run build` (or `npm install`) in the recursive-rl folder first.');
  process.exit(1);
}
if (nodeJob) {
  const { execNodeJob } = await import(entry.href);
  process.exitCode = await execNodeJob(process.argv.slice(4));
} else await import(entry.href);

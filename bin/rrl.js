#!/usr/bin/env node
// The `rrl` command. The TypeScript sources are compiled to dist/ by `npm install` (prepare) or `npm run build`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/index.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('rrl: dist/ is missing; run `npm run build` (or `npm install`) in the recursive-rl folder first.');
  process.exit(1);
}
await import(entry.href);

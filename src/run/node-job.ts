/**
 * The node side of a cluster job: `rrl job exec --spec FILE --brief FILE [--data FILE] --out DIR`.
 * It trains the spec against the public brief (with the training data the harness wrote,
 * if any) and writes the artifact into DIR. It never scores: the hidden evaluation stays
 * with the harness, and nothing this module imports can reach it (boundary.test.ts checks).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { TaskBrief } from '../spec/brief.js';
import type { SupervisedData } from '../spec/data.js';
import { runJob } from '../inner/train.js';

/** The usage line of `rrl job exec`. */
export const NODE_JOB_USAGE = 'usage: rrl job exec --spec FILE --brief FILE [--data FILE] --out DIR';

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`--${what}: cannot read ${path}: ${(err as Error).message}`);
  }
}

/**
 * Runs one job from files and returns the process exit code: 0 trained, 1 the job failed
 * (its status.json says why), 2 the arguments are wrong.
 */
export async function execNodeJob(argv: string[]): Promise<number> {
  let values: { spec?: string; brief?: string; data?: string; out?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { spec: { type: 'string' }, brief: { type: 'string' }, data: { type: 'string' }, out: { type: 'string' } },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`rrl job exec: ${(err as Error).message}\n${NODE_JOB_USAGE}\n`);
    return 2;
  }
  const missing = (['spec', 'brief', 'out'] as const).filter((k) => !values[k]);
  if (missing.length) {
    process.stderr.write(`rrl job exec: missing ${missing.map((m) => `--${m}`).join(', ')}\n${NODE_JOB_USAGE}\n`);
    return 2;
  }
  const outDir = resolve(values.out!);
  let spec: unknown;
  let brief: TaskBrief;
  let data: SupervisedData | undefined;
  try {
    spec = readJson(values.spec!, 'spec');
    brief = readJson(values.brief!, 'brief') as TaskBrief;
    data = values.data ? (readJson(values.data, 'data') as SupervisedData) : undefined;
  } catch (err) {
    process.stderr.write(`rrl job exec: ${(err as Error).message}\n`);
    return 2;
  }
  let shown = -1;
  const t0 = performance.now();
  try {
    const a = await runJob(spec, brief, {
      outDir,
      data,
      onProgress: (used, cap) => {
        const tenth = cap > 0 ? Math.floor((10 * used) / cap) : 0;
        if (tenth > shown) {
          shown = tenth;
          process.stderr.write(`training: ${used}/${cap} (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
        }
      },
    });
    process.stderr.write(
      `done: ${a.stopReason}, ${a.cost.envSteps} env steps, ${a.cost.examples} examples, ${a.cost.wallSeconds.toFixed(1)} s; artifact in ${outDir}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`rrl job exec: the job failed: ${(err as Error).message}\n`);
    return 1;
  }
}

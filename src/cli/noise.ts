/**
 * `rrl tasks`' noise columns and `rrl tasks --measure-noise`: each task's training noise (its
 * baseline spec on the harness's seeds) as the noise table holds it (store/noise.ts), and the
 * measurement of the tasks that have none, as a run of baseline jobs only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from '../run/local.js';
import { engineIdentity } from '../store/cache.js';
import { NoiseStore, type NoiseRecord, noiseFile } from '../store/noise.js';
import { evalIdentity } from '../tasks/secret.js';
import { trainAgent } from '../outer/loop.js';
import { BASELINE_SEEDS } from '../outer/noise.js';
import { num } from './format.js';

/** The noise table's records for this engine and evaluation secret (empty, with the reason, when unreadable). */
export function measuredNoise(): { records: Map<string, NoiseRecord>; problem: string | null } {
  let table: NoiseStore | null = null;
  try {
    table = new NoiseStore();
    return { records: table.all(engineIdentity(), evalIdentity()), problem: null };
  } catch (err) {
    return { records: new Map(), problem: `the noise table ${noiseFile()} could not be read: ${(err as Error).message.split('\n')[0]}` };
  } finally {
    table?.close();
  }
}

/** A task's noise in one cell: `sd 0.031 · spread 0.074 · eval se 0.020 (5 seeds)`, or `not measured`. */
export function noiseCell(r: NoiseRecord | undefined): string {
  if (!r) return 'not measured';
  return `sd ${num(r.sd, 3)} · spread ${num(r.spread, 3)} · eval se ${num(r.evalSe, 3)} (${r.seeds} seeds)`;
}

/**
 * Trains the baseline spec of every task in `tasks` on the harness's seeds (in a throw-away run
 * directory) and records their noise; prints one line per finished job on `log`.
 */
export async function measureNoise(tasks: string[], workers: number | undefined, log: (line: string) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-noise-'));
  const executor = new LocalExecutor({ workers });
  let done = 0;
  try {
    log(`measuring the training noise of ${tasks.length} task(s): the baseline spec on ${BASELINE_SEEDS} harness seeds each`);
    await trainAgent(dir, { tasks, agent: 'baseline', iterations: 0, group: 1, seed: 0 }, executor, {
      onEvent: (e) => {
        if (e.type === 'job') {
          const result = e.job.status === 'succeeded' ? num(e.job.normalized, 3) : `${e.job.status} (${e.job.error ?? e.job.failureKind})`;
          log(`  ${++done}/${tasks.length * BASELINE_SEEDS} ${e.job.task}: ${result}`);
        } else if (e.type === 'phase') log(`  ${e.message}`);
      },
    });
  } finally {
    await executor.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

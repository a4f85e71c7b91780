/**
 * `npm run bench -- fidelity`: compute per unit of held-out gain, with and without successive
 * halving, in the same run. For each seed it trains the embedded controller with `rrl train`'s
 * loop once per arm (the full budget for every proposal, then each successive-halving setting)
 * and reads the run's compute report: the agent's jobs' examples, env steps and CPU seconds, and
 * the held-out gain (per task, the best full-budget normalised hidden score minus the baseline
 * spec's) and the confirmed gain (the same from the best score confirmed on the harness's seeds,
 * which the luck of the best of many single trainings does not inflate). It prints each arm's
 * figures per seed and their means, with the ratio of the full-budget arm's compute per unit of
 * either gain to each arm's (examples for supervised tasks, env steps for control ones, and CPU
 * seconds), and each arm's gains ± their sd over seeds.
 *
 * Options (after `--`):
 * - `--seeds=1,2,3` (the default) or a range `--seeds=1-5`;
 * - `--tasks=cars-mpg,two-spirals` (the default), `--iterations=6`, `--group=9`, `--workers=2`;
 * - `--arms=full,3:1/9,9:1/9,27:1/27` (the default): `full`, or `ETA:MIN-SHARE` for `--fidelity asha`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainAgent } from '../src/outer/loop.js';
import type { FidelityConfig } from '../src/outer/fidelity.js';
import type { ComputeReport } from '../src/outer/compute-report.js';
import { LocalExecutor } from '../src/run/local.js';
import { num, table } from '../src/cli/format.js';

const log = (s: string): boolean => process.stderr.write(`${s}\n`);

/** One arm of the comparison: a name and its fidelity setting (null: every proposal at its full budget). */
interface Arm {
  name: string;
  fidelity: FidelityConfig | null;
}

/** Parses `full` or `ETA:MIN-SHARE` (the share as a fraction `1/27` or a decimal). */
function parseArm(s: string): Arm {
  if (s === 'full') return { name: 'full budget', fidelity: null };
  const m = /^(\d+):(?:(\d+)\/(\d+)|([0-9.]+))$/.exec(s);
  if (!m) throw new Error(`--arms: "${s}" is neither full nor ETA:MIN-SHARE (for example 3:1/27)`);
  const minShare = m[2] ? Number(m[2]) / Number(m[3]) : Number(m[4]);
  return { name: `ASHA eta ${m[1]}, rung 0 at ${m[2] ? `${m[2]}/${m[3]}` : m[4]}`, fidelity: { mode: 'asha', eta: Number(m[1]), minShare } };
}

/** Seeds from `1,2,3` or `1-5`. */
function parseSeeds(s: string): number[] {
  const range = /^(\d+)-(\d+)$/.exec(s);
  if (range) return Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i);
  return s.split(',').map((x) => Number.parseInt(x, 10));
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]): number => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));

export async function fidelity(): Promise<Record<string, unknown>> {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const seeds = parseSeeds(opt('seeds') ?? '1,2,3');
  const tasks = (opt('tasks') ?? 'cars-mpg,two-spirals').split(',');
  const iterations = Number(opt('iterations') ?? 6);
  const group = Number(opt('group') ?? 9);
  const workers = Number(opt('workers') ?? 2);
  const arms = (opt('arms') ?? 'full,3:1/9,9:1/9,27:1/27').split(',').map(parseArm);
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-bench-fidelity-'));
  const runs: { arm: string; seed: number; compute: ComputeReport; wallSeconds: number }[] = [];
  const executor = new LocalExecutor({ workers });
  try {
    for (const seed of seeds) {
      for (const [i, arm] of arms.entries()) {
        const t0 = performance.now();
        const summary = await trainAgent(
          join(tmp, `seed-${seed}-arm-${i}`),
          { tasks, agent: 'controller', iterations, group, seed, ...(arm.fidelity ? { fidelity: arm.fidelity } : {}) },
          executor,
          { cache: null },
        );
        const wallSeconds = (performance.now() - t0) / 1000;
        runs.push({ arm: arm.name, seed, compute: summary.compute, wallSeconds });
        log(
          `fidelity: seed ${seed}, ${arm.name}: gain ${num(summary.compute.gain)} (confirmed ${num(summary.compute.confirmedGain)}), ${num(summary.compute.proposals.examples)} examples, ${wallSeconds.toFixed(0)} s`,
        );
      }
    }
  } finally {
    await executor.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  const perArm = arms.map((arm) => {
    const mine = runs.filter((r) => r.arm === arm.name);
    const gains = mine.map((r) => r.compute.gain ?? 0);
    const confirmed = mine.map((r) => r.compute.confirmedGain ?? 0);
    const spent = {
      examples: mean(mine.map((r) => r.compute.proposals.examples)),
      envSteps: mean(mine.map((r) => r.compute.proposals.envSteps)),
      cpuSeconds: mean(mine.map((r) => r.compute.proposals.cpuSeconds)),
    };
    // Compute per unit of the mean gain (the mean compute over the mean gain).
    const per = (g: number): Record<keyof typeof spent, number | null> => ({
      examples: g > 0 && spent.examples > 0 ? spent.examples / g : null,
      envSteps: g > 0 && spent.envSteps > 0 ? spent.envSteps / g : null,
      cpuSeconds: g > 0 ? spent.cpuSeconds / g : null,
    });
    return {
      arm: arm.name,
      jobs: mean(mine.map((r) => r.compute.proposals.jobs)),
      ...spent,
      wallSeconds: mean(mine.map((r) => r.wallSeconds)),
      gain: mean(gains),
      gainSd: sd(gains),
      confirmedGain: mean(confirmed),
      confirmedGainSd: sd(confirmed),
      perGain: per(mean(gains)),
      perConfirmedGain: per(mean(confirmed)),
    };
  });
  const ref = perArm[0];
  const ratio = (a: number | null, b: number | null): number | null => (a !== null && b !== null && b > 0 ? a / b : null);
  // How many times less compute per unit of gain than the first arm (the full budget by default).
  const fewer = (a: (typeof perArm)[number], which: 'perGain' | 'perConfirmedGain') => ({
    examples: ratio(ref[which].examples, a[which].examples),
    envSteps: ratio(ref[which].envSteps, a[which].envSteps),
    cpuSeconds: ratio(ref[which].cpuSeconds, a[which].cpuSeconds),
  });
  const summary = perArm.map((a) => ({ ...a, fewerPerGain: fewer(a, 'perGain'), fewerPerConfirmedGain: fewer(a, 'perConfirmedGain') }));
  log(
    table(
      ['seed', 'arm', 'jobs', 'examples', 'env steps', 'CPU s', 'gain', 'confirmed gain', 'wall s'],
      runs.map((r) => [
        String(r.seed),
        r.arm,
        String(r.compute.proposals.jobs),
        num(r.compute.proposals.examples),
        num(r.compute.proposals.envSteps),
        num(r.compute.proposals.cpuSeconds),
        num(r.compute.gain),
        num(r.compute.confirmedGain),
        r.wallSeconds.toFixed(0),
      ]),
    ),
  );
  // Examples for supervised tasks, env steps for control: the ratios of the one the tasks use.
  const unit = summary.some((a) => a.examples > 0) ? 'examples' : 'envSteps';
  const unitName = unit === 'examples' ? 'examples' : 'env steps';
  log(
    table(
      [
        'arm (mean over seeds)',
        'jobs',
        unitName,
        'CPU s',
        'gain ± sd',
        `× fewer ${unitName} / gain`,
        '× fewer CPU s / gain',
        'confirmed gain ± sd',
        `× fewer ${unitName} / confirmed gain`,
        '× fewer CPU s / confirmed gain',
      ],
      summary.map((a) => [
        a.arm,
        num(a.jobs),
        num(a[unit]),
        num(a.cpuSeconds),
        `${num(a.gain)} ± ${num(a.gainSd)}`,
        num(a.fewerPerGain[unit]),
        num(a.fewerPerGain.cpuSeconds),
        `${num(a.confirmedGain)} ± ${num(a.confirmedGainSd)}`,
        num(a.fewerPerConfirmedGain[unit]),
        num(a.fewerPerConfirmedGain.cpuSeconds),
      ]),
    ),
  );
  return { tasks, iterations, group, seeds, arms: summary, runs: runs.map((r) => ({ arm: r.arm, seed: r.seed, wallSeconds: r.wallSeconds, ...r.compute })) };
}

/**
 * `npm run bench -- noise`: how much of a task's baseline score is seed luck. For every built-in
 * task it trains the baseline spec on several seeds under the current evaluation secret and
 * prints, per task, the normalised hidden scores, their mean, sample standard deviation and
 * spread (max − min), and the mean bootstrap standard error of the evaluation itself (the
 * score's `stderr`: the noise of the held-out episodes or test rows, which no seed changes).
 *
 * Options (after `--`):
 * - `--seeds=1,2,3,4,5` (the default), a range `--seeds=11-15`, or `--seeds=secret:5`: five seeds
 *   per task derived from the evaluation secret and the task id (as the harness may pick them);
 * - `--tasks=ID,ID` to measure only those tasks;
 * - `--better` to train each task's better spec (src/tasks/reference-specs.ts) on the same seeds.
 * The Gymnasium tasks (`gym-cartpole`, `inverted-pendulum-torch`) need the Python environment
 * (`.venv`, or `RRL_PYTHON`): without gymnasium (or torch and MuJoCo) they are skipped, loudly.
 * A task whose baseline spread passes 0.1 normalised is marked `over`.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '../src/inner/train.js';
import { bridgePython } from '../src/inner/envs/gym-bridge.js';
import { dataForJob, scoreArtifact } from '../src/outer/scoring/hidden-score.js';
import { listTasks } from '../src/tasks/briefs.js';
import { REFERENCE_SPECS } from '../src/tasks/reference-specs.js';
import { evalIdentity, evalSecret } from '../src/tasks/secret.js';
import type { JobSpecInput } from '../src/spec/schema.js';
import { num, table } from '../src/cli/format.js';

const log = (s: string): boolean => process.stderr.write(`${s}\n`);

/** The largest baseline spread (normalised, max − min over the seeds) a built-in task may have. */
export const MAX_BASELINE_SPREAD = 0.1;

/** What the Python side of a Gymnasium task needs, as an import line. */
const PYTHON_NEEDS: Record<string, string> = {
  'gym-cartpole': 'import gymnasium',
  'inverted-pendulum-torch': 'import gymnasium, mujoco, torch',
};

/** Why a task cannot run here (its Python is missing), or null. */
function missingPython(task: string): string | null {
  const need = PYTHON_NEEDS[task];
  if (!need) return null;
  const python = bridgePython();
  try {
    execFileSync(python, ['-c', need], { stdio: 'pipe', timeout: 120_000 });
    return null;
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    const last = (e.stderr?.toString() ?? e.message).trim().split('\n').at(-1) ?? '';
    return `${python} cannot "${need}" (${last}); run python/setup-venv.sh or set RRL_PYTHON`;
  }
}

/** Seeds for a task: a list, a range, or `secret:N` (N seeds from the secret and the task id, in [1, 2³¹ − 1]). */
export function seedsFor(task: string, arg: string, secret = evalSecret()): number[] {
  const derived = /^secret(?::(\d+))?$/.exec(arg);
  if (derived) {
    const n = Number(derived[1] ?? 5);
    return Array.from({ length: n }, (_, i) => (createHash('sha256').update(`rrl-noise/${secret}/${task}/${i}`).digest().readUInt32BE(0) % 0x7ffffffe) + 1);
  }
  const range = /^(\d+)-(\d+)$/.exec(arg);
  if (range) {
    const [a, b] = [Number(range[1]), Number(range[2])];
    if (b < a) throw new Error(`--seeds=${arg}: the range is empty`);
    return Array.from({ length: b - a + 1 }, (_, i) => a + i);
  }
  const list = arg.split(',').map((s) => Number(s.trim()));
  if (!list.length || list.some((s) => !Number.isInteger(s) || s < 0 || s > 0x7fffffff))
    throw new Error(`--seeds=${arg}: expected seeds like 1,2,3, a range 1-5 or secret[:N]`);
  return list;
}

/** Mean, sample standard deviation and spread of some scores. */
export function summarize(xs: number[]): { mean: number; sd: number; spread: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, sd, spread: Math.max(...xs) - Math.min(...xs) };
}

interface SeedRun {
  seed: number;
  raw: number | null;
  normalized: number | null;
  stderr: number | null;
  cpuSeconds: number | null;
  /** Env steps (control) or examples (supervised) the job used. */
  used: number | null;
  error?: string;
}

interface SpecNoise {
  runs: SeedRun[];
  mean: number | null;
  sd: number | null;
  spread: number | null;
  meanStderr: number | null;
  failed: number;
}

async function measure(task: string, spec: JobSpecInput, seeds: number[], label: string, tmp: string): Promise<SpecNoise> {
  const { brief } = listTasks().find((t) => t.brief.id === task)!;
  const runs: SeedRun[] = [];
  for (const seed of seeds) {
    const s = { ...structuredClone(spec), seed } as JobSpecInput;
    const dir = join(tmp, `${task}-${label}-${seed}`);
    const t0 = performance.now();
    try {
      const a = await runJob(s, brief, { outDir: dir, data: dataForJob(task, s) });
      const score = scoreArtifact(task, dir);
      runs.push({
        seed,
        raw: score.raw,
        normalized: score.normalized,
        stderr: score.stderr,
        cpuSeconds: a.cost.cpuSeconds,
        used: a.cost.envSteps || a.cost.examples,
      });
      log(`noise: ${task} ${label} seed ${seed}: ${num(score.normalized)} (± ${num(score.stderr)}; ${num((performance.now() - t0) / 1000, 1)} s)`);
    } catch (err) {
      runs.push({ seed, raw: null, normalized: null, stderr: null, cpuSeconds: null, used: null, error: (err as Error).message.split('\n')[0] });
      log(`noise: ${task} ${label} seed ${seed}: FAILED (${(err as Error).message.split('\n')[0]})`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const ok = runs.filter((r) => r.normalized !== null);
  const stats = ok.length ? summarize(ok.map((r) => r.normalized!)) : null;
  const errs = ok.map((r) => r.stderr).filter((e): e is number => e !== null);
  return {
    runs,
    mean: stats?.mean ?? null,
    sd: stats?.sd ?? null,
    spread: stats?.spread ?? null,
    meanStderr: errs.length ? errs.reduce((a, b) => a + b, 0) / errs.length : null,
    failed: runs.length - ok.length,
  };
}

export async function noise(): Promise<Record<string, unknown>> {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const seedArg = opt('seeds') ?? '1-5';
  const only = opt('tasks')
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const better = args.includes('--better');
  const all = listTasks();
  if (only) for (const id of only) if (!all.some((t) => t.brief.id === id)) throw new Error(`--tasks: unknown task "${id}"`);
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-noise-'));
  const rows: Record<string, unknown>[] = [];
  const skipped: { task: string; why: string }[] = [];
  const t0 = performance.now();
  for (const { brief, baseline } of all) {
    if (only && !only.includes(brief.id)) continue;
    const why = missingPython(brief.id);
    if (why) {
      log(`noise: SKIPPED ${brief.id}: ${why}`);
      skipped.push({ task: brief.id, why });
      continue;
    }
    const seeds = seedsFor(brief.id, seedArg);
    const base = await measure(brief.id, baseline, seeds, 'baseline', tmp);
    const ref = better ? REFERENCE_SPECS[brief.id] : undefined;
    const good = ref ? await measure(brief.id, ref.spec(), seeds, 'better', tmp) : null;
    rows.push({ task: brief.id, split: brief.split, seeds, baseline: base, ...(good ? { better: good } : {}) });
  }
  rmSync(tmp, { recursive: true, force: true });
  const f = (v: number | null | undefined): string => num(v ?? null);
  const head = ['task', 'split', 'baseline scores (normalised)', 'mean', 'sd', 'spread', 'eval. stderr', ''];
  if (better) head.push('better mean', 'better sd', 'better spread');
  console.log(
    table(
      head,
      rows.map((r) => {
        const b = r.baseline as SpecNoise;
        const g = r.better as SpecNoise | undefined;
        const over = b.failed ? `${b.failed} failed` : (b.spread ?? 0) > MAX_BASELINE_SPREAD ? 'over' : '';
        const cells = [String(r.task), String(r.split), b.runs.map((x) => f(x.normalized)).join(' '), f(b.mean), f(b.sd), f(b.spread), f(b.meanStderr), over];
        if (better) cells.push(f(g?.mean), f(g?.sd), f(g?.spread));
        return cells;
      }),
    ),
  );
  for (const s of skipped) console.log(`SKIPPED ${s.task}: ${s.why}`);
  const over = rows.filter((r) => ((r.baseline as SpecNoise).spread ?? 0) > MAX_BASELINE_SPREAD || (r.baseline as SpecNoise).failed).map((r) => r.task);
  return { evalIdentity: evalIdentity(), seeds: seedArg, maxSpread: MAX_BASELINE_SPREAD, over, skipped, wallSeconds: (performance.now() - t0) / 1000, rows };
}

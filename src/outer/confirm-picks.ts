/**
 * The held-out comparison on confirmed scores. A method's best of 16 is the highest of 16 single
 * trainings, so the luck of their seeds lifts it; the zero-shot job is one training, which luck
 * moves either way. What a user keeps is the spec, and its next training is not picked for luck.
 * `confirmPicks` retrains, on one held-out task, the spec each compared row picked (its highest
 * single score among the proposals the row counts) on the harness's `CONFIRM_SEEDS` seeds (the
 * seeds a bonus is confirmed on; the experiment's held-out runs never train on them) and gives
 * each row the mean. A spec that several rows picked, or that differs from another only by its
 * seed, is trained once. The baseline spec's score is already a mean over the harness's seeds.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '../run/executor.js';
import { type JobRow, Store } from '../store/store.js';
import type { Agent, Proposal } from './agents/types.js';
import { type LoopEvent, trainAgent } from './loop.js';
import { seedlessKey } from './identity.js';
import { CONFIRM_SEEDS, confirmation, taskReference, withSeed } from './noise.js';
import type { Scorer } from './scoring/scorer-pool.js';
import type { HeldOutRow } from './transfer-summary.js';

/** A row of the comparison that is confirmed. */
type PickKey = Exclude<keyof HeldOutRow, 'task' | 'baseline'>;

/**
 * The rows confirmed: the held-out run each reads (its directory under the task's) and how many of
 * that run's first proposals it picks from. These are the rows the verdicts compare (and the
 * frozen controller's best of 16); the other best-of-4 rows are not confirmed.
 */
export const CONFIRMED_ROWS: { key: PickKey; run: string; first: number }[] = [
  { key: 'zeroShot', run: 'controller', first: 1 },
  { key: 'controllerBest4', run: 'controller', first: 4 },
  { key: 'controllerBest16', run: 'controller', first: 16 },
  { key: 'priorZeroShot', run: 'prior', first: 1 },
  { key: 'controllerAdaptBest16', run: 'controller-adapt', first: 16 },
  { key: 'randomBest4', run: 'random', first: 4 },
  { key: 'randomBest16', run: 'random', first: 16 },
  { key: 'searchBest16', run: 'search', first: 16 },
  { key: 'optunaTpeBest16', run: 'optuna-tpe', first: 16 },
  { key: 'optunaCmaesBest16', run: 'optuna-cmaes', first: 16 },
  { key: 'optunaTpeSeededBest16', run: 'optuna-tpe-seeded', first: 16 },
  { key: 'optunaCmaesSeededBest16', run: 'optuna-cmaes-seeded', first: 16 },
];

/**
 * A held-out run: its proposals (spec, and single score as the comparison reads it: a failed job
 * 0), its baseline's reference, the seeds its baseline jobs trained on (the harness's seeds, in
 * order) and its evaluation identity.
 */
export interface HeldOutRun {
  proposals: { spec: unknown; v: number }[];
  baseline: number | null;
  baselineSeeds: number[];
  evalId: string | null;
}

/** Reads a finished held-out run in `dir`, or null when there is none (a method that did not run). */
export function readHeldOutRun(dir: string): HeldOutRun | null {
  if (!existsSync(join(dir, 'store.db'))) return null;
  const store = new Store(dir);
  try {
    const run = store.getRun();
    if (!run) return null;
    const jobs = store.jobs(run.id);
    const baselines = jobs.filter((j) => j.kind === 'baseline').sort((a, b) => a.slot - b.slot);
    return {
      proposals: jobs.filter((j) => j.kind === 'proposal').map((j) => ({ spec: j.spec, v: j.status === 'succeeded' ? (j.normalized ?? 0) : 0 })),
      baseline: taskReference(baselines).mean,
      // A retried baseline seed trains the same seed again: each seed once, in slot order.
      baselineSeeds: [...new Set(baselines.map((j) => (j.spec as { seed?: unknown }).seed).filter((x): x is number => typeof x === 'number'))],
      evalId: run.evalIdentity ?? null,
    };
  } finally {
    store.close();
  }
}

/** The finished confirmation run in `dir`: its proposals in the order they were proposed, and its baseline jobs. */
function confirmationRows(dir: string): { proposals: JobRow[]; baselines: JobRow[] } {
  const store = new Store(dir);
  try {
    const jobs = store.jobs(store.getRun()!.id);
    return { proposals: jobs.filter((j) => j.kind === 'proposal').sort((a, b) => a.slot - b.slot), baselines: jobs.filter((j) => j.kind === 'baseline') };
  } finally {
    store.close();
  }
}

/** The pick among the first `n` proposals: the highest single score, the earlier on ties (the proposal the comparison's best of n scored). */
export function pickOf<P extends { v: number }>(proposals: P[], n: number): P | null {
  let best: P | null = null;
  for (const p of proposals.slice(0, n)) if (best === null || p.v > best.v) best = p;
  return best;
}

/** Proposes the given specs in order and never learns: the confirmation's trainings. */
class FixedSpecs implements Agent {
  readonly name = 'confirm-picks';
  private n = 0;
  constructor(private readonly specs: unknown[]) {}
  async propose(): Promise<Proposal> {
    const i = this.n++;
    return { spec: this.specs[i % this.specs.length], trace: { slot: i } };
  }
  async update(): Promise<Record<string, never>> {
    return {};
  }
  async state(): Promise<{ n: number }> {
    return { n: this.n };
  }
  async load(s: unknown): Promise<void> {
    this.n = (s as { n: number }).n;
  }
}

/**
 * One held-out task's confirmed rows: per confirmed row its pick's single score and confirmed mean
 * (absent: the row's method did not run, or the harness lost every seed).
 */
export interface ConfirmedPicks {
  single: Partial<Record<PickKey, number>>;
  confirmed: Partial<Record<PickKey, number>>;
  /** Distinct specs trained, each on `CONFIRM_SEEDS` seeds. */
  specs: number;
}

/** What `confirmPicks` runs with: the experiment's executor, cache and scorer, and the seed of the task's held-out runs. */
export interface ConfirmPicksContext {
  executor: Executor;
  cache: string;
  scorer: Scorer;
  seed: number;
  onEvent?: (e: LoopEvent) => void;
}

/**
 * Confirms the picks of the held-out runs in `taskDir` (one directory per method, as the
 * experiment writes them): each distinct picked spec on the task's first `CONFIRM_SEEDS` harness
 * seeds (the seeds its baseline trained on, read from the runs' baseline jobs: the harness's
 * confirmation seeds, as `confirmJobs` uses them, without reading the secret here), in the run
 * `taskDir/confirm-picks`, each pick's confirmed score by the harness's one confirmation rule
 * (`confirmation`: a failed seed counts as the failure it is, the reference less one; a pick
 * whose every seed the harness lost has none). A finished run there is read again, not retrained.
 */
export async function confirmPicks(taskDir: string, task: string, ctx: ConfirmPicksContext): Promise<ConfirmedPicks> {
  const runs = new Map<string, HeldOutRun | null>();
  for (const r of CONFIRMED_ROWS) if (!runs.has(r.run)) runs.set(r.run, readHeldOutRun(join(taskDir, r.run)));
  const picked = CONFIRMED_ROWS.flatMap((r) => {
    const run = runs.get(r.run);
    const got = run ? pickOf(run.proposals, r.first) : null;
    return got ? [{ key: r.key, spec: got.spec, v: got.v, specKey: seedlessKey(got.spec) }] : [];
  });
  if (!picked.length) return { single: {}, confirmed: {}, specs: 0 };
  const specs = [...new Map(picked.map((p) => [p.specKey, p.spec])).entries()];
  const seeds = [...runs.values()].find((r) => r && r.baselineSeeds.length >= CONFIRM_SEEDS)?.baselineSeeds.slice(0, CONFIRM_SEEDS);
  if (!seeds) throw new Error(`confirm-picks: no held-out run in ${taskDir} holds the ${CONFIRM_SEEDS} baseline seeds the confirmation trains on`);
  const script = specs.flatMap(([, spec]) => seeds.map((s) => withSeed(spec, s)));
  const dir = join(taskDir, 'confirm-picks');
  const config = { tasks: [task], agent: 'random' as const, iterations: 1, group: script.length, seed: ctx.seed, confirm: false };
  await trainAgent(dir, config, ctx.executor, { agent: new FixedSpecs(script), cache: ctx.cache, scorer: ctx.scorer, onEvent: ctx.onEvent });
  const { proposals, baselines } = confirmationRows(dir);
  const ref = taskReference(baselines);
  // The harness's one confirmation rule: every seed counts, a failed one as the failure it is.
  const confirmedOf = new Map(specs.map(([key], k) => [key, confirmation(proposals.slice(k * seeds.length, (k + 1) * seeds.length), ref)?.normalized ?? null]));
  const confirmed = picked.flatMap((p) => {
    const v = confirmedOf.get(p.specKey);
    return v === null || v === undefined ? [] : [[p.key, v] as const];
  });
  return {
    single: Object.fromEntries(picked.map((p) => [p.key, p.v])),
    confirmed: Object.fromEntries(confirmed),
    specs: specs.length,
  };
}

/**
 * The transfer experiment's held-out comparison on one task (experiment.ts, step 2): the
 * meta-trained controller frozen and adapting, random search, the model-based search and Optuna's
 * samplers, each a run of its own in the task's directory, read back into the task's row; with
 * `confirmPicks`, the row again on confirmed scores (confirm-picks.ts).
 */
import { join } from 'node:path';
import type { Executor } from '../run/executor.js';
import { oneLine } from '../spec/bounds.js';
import { Controller, type ControllerOptions } from './agents/controller.js';
import { OptunaAgent } from './agents/optuna.js';
import type { Agent } from './agents/types.js';
import { confirmPicks, readHeldOutRun } from './confirm-picks.js';
import { type AgentName, type LoopEvent, trainAgent } from './loop.js';
import { CONFIRM_SEEDS } from './noise.js';
import type { Scorer } from './scoring/scorer-pool.js';
import type { TransferListener, TransferOptions } from './transfer-options.js';
import { type HeldOutRow, METHODS, OPTUNA_ARMS, type OptunaKey, best } from './transfer-summary.js';

/**
 * The meta-trained controller on a held-out task: its first proposal per task is its mode;
 * frozen, it never learns, adapting, it keeps its GRPO updates on the task's own rewards.
 */
export class HeldOut implements Agent {
  readonly name: string;
  private readonly asked = new Set<string>();
  constructor(
    private readonly inner: Agent,
    private readonly adapt: boolean,
  ) {
    this.name = adapt ? 'controller-adapting' : 'controller-frozen';
  }
  propose(...[brief, ctx]: Parameters<Agent['propose']>) {
    const first = !this.asked.has(brief.id);
    this.asked.add(brief.id);
    return this.inner.propose(brief, first ? { ...ctx, greedy: true } : ctx);
  }
  async update(...args: Parameters<Agent['update']>) {
    return this.adapt ? this.inner.update(...args) : {};
  }
  state() {
    return this.inner.state();
  }
  async load() {}
}

/**
 * Reads the normalised scores of a finished held-out run's proposals in proposal order (a failed
 * job: 0, the floor of the scale), and its baseline's reference (`readHeldOutRun`).
 */
export function readRun(dir: string): { proposals: number[]; baseline: number | null } {
  const run = readHeldOutRun(dir);
  if (!run) throw new Error(`no finished held-out run in ${dir}`);
  return { proposals: run.proposals.map((p) => p.v), baseline: run.baseline };
}

/** What every held-out comparison of an experiment shares. */
export interface ComparisonContext {
  options: TransferOptions;
  /** The experiment's result cache file. */
  cache: string;
  executor: Executor;
  /** The Python of the Optuna rows, or null when they do not run. */
  optuna: { python: string } | null;
  scorer: Scorer;
  /** What did not run and why, one line each: a comparison adds its Optuna failures. */
  notes: string[];
  onEvent?: TransferListener;
}

/** One held-out task of one repetition, and the controller that meets it. */
export interface HeldOutTask {
  task: string;
  /** The repetition's directory (the task's runs go in `dir/task`) and its prefix in the events. */
  dir: string;
  tag: string;
  /** The seed of the task's runs. */
  seed: number;
  /** The meta-trained controller, and its settings (the adapting copy's). */
  controller: Controller;
  settings: ControllerOptions;
  /** The reference prior's controller (`TransferOptions.referencePrior`), whose zero-shot job is a row; null without one. */
  reference: Controller | null;
}

/** One task's rows: on single scores, and on confirmed scores (null without `confirmPicks`). */
export interface TaskComparison {
  row: HeldOutRow;
  confirmed: HeldOutRow | null;
}

/** The Optuna rows of one task as their runs finish (null: not run, or failed), and the failures' notes. */
interface OptunaCells {
  rows: Record<OptunaKey, number | null>;
  notes: string[];
}

/** Whether the comparison runs every method, not the controller's and random search's rows alone. */
const comparesEveryMethod = (options: TransferOptions): boolean => (options.compare ?? 'all') === 'all';

/** The Optuna rows the comparison runs: all four with `all`, the two seeded ones with `corpus`, none with `random`. */
export function optunaArmsOf(options: TransferOptions): typeof OPTUNA_ARMS {
  const compare = options.compare ?? 'all';
  return compare === 'all' ? OPTUNA_ARMS : compare === 'corpus' ? OPTUNA_ARMS.filter((a) => a.seeded) : [];
}

/** The configuration every run on the task shares: the task alone, its seed, no confirmation jobs. */
function taskConfig(t: HeldOutTask): { tasks: string[]; seed: number; confirm: false } {
  // No confirmation jobs: the comparison reads the jobs' scores, which a confirmation never changes (TrainConfig.confirm).
  return { tasks: [t.task], seed: t.seed, confirm: false };
}

/** The loop's events of a run on the task, each with the task as its stage. */
function taskEvents(ctx: ComparisonContext, t: HeldOutTask): (e: LoopEvent) => void {
  return (e) => ctx.onEvent?.({ ...e, stage: `${t.tag}${t.task}` });
}

/** Says which methods the task's comparison runs. */
function announce(ctx: ComparisonContext, t: HeldOutTask): void {
  const arms = ctx.optuna ? optunaArmsOf(ctx.options).map((a) => a.label) : [];
  const learning = comparesEveryMethod(ctx.options) ? ', the adapting controller, model-based search' : '';
  const reference = t.reference ? ', the reference prior (zero-shot)' : '';
  const message = `${t.tag}held-out ${t.task}: controller (frozen), random search${learning}${arms.length ? `, ${arms.join(', ')}` : ''}${reference}`;
  ctx.onEvent?.({ type: 'phase', message, stage: t.task });
}

/** The frozen controller's run, first and alone: it trains the task's baseline once, which every other run then takes from the cache. */
async function runFrozen(ctx: ComparisonContext, t: HeldOutTask): Promise<void> {
  const frozen = { agent: new HeldOut(t.controller, false), cache: ctx.cache, scorer: ctx.scorer, onEvent: taskEvents(ctx, t) };
  await trainAgent(join(t.dir, t.task, 'controller'), { ...taskConfig(t), agent: 'controller', iterations: 1, group: 16 }, ctx.executor, frozen);
}

/** A listener for one run's end: the phase event that says it is done. */
function doneEvent(ctx: ComparisonContext, t: HeldOutTask): (label: string) => () => void {
  return (label) => () => ctx.onEvent?.({ type: 'phase', message: `${t.tag}held-out ${t.task}: ${label} done`, stage: t.task });
}

/** Starts random search and, comparing every method, the adapting controller and the model-based search; their runs' promises. */
async function startSearches(ctx: ComparisonContext, t: HeldOutTask): Promise<Promise<void>[]> {
  const base = taskConfig(t);
  const done = doneEvent(ctx, t);
  const quiet = { cache: ctx.cache, scorer: ctx.scorer };
  const runs: Promise<void>[] = [];
  runs.push(trainAgent(join(t.dir, t.task, 'random'), { ...base, agent: 'random', iterations: 1, group: 16 }, ctx.executor, quiet).then(done('random search')));
  if (t.reference) {
    // The reference prior's single best guess: one greedy proposal, frozen.
    const reference = { agent: new HeldOut(t.reference, false), ...quiet };
    const config = { ...base, agent: 'controller' as const, iterations: 1, group: 1 };
    runs.push(trainAgent(join(t.dir, t.task, 'prior'), config, ctx.executor, reference).then(done('reference prior')));
  }
  if (!comparesEveryMethod(ctx.options)) return runs;
  // Adapting: a copy of the meta-trained controller (every task starts from the same weights) in rounds like the search's.
  const copy = new Controller(t.settings);
  await copy.load(await t.controller.state());
  const adapting = { agent: new HeldOut(copy, true), ...quiet };
  const adaptConfig = { ...base, agent: 'controller' as const, iterations: 4, group: 4 };
  runs.push(trainAgent(join(t.dir, t.task, 'controller-adapt'), adaptConfig, ctx.executor, adapting).then(done('controller, adapting')));
  const searchConfig = { ...base, agent: 'search' as const, iterations: 4, group: 4 };
  runs.push(trainAgent(join(t.dir, t.task, 'search'), searchConfig, ctx.executor, quiet).then(done('model-based search')));
  return runs;
}

/**
 * Starts Optuna's samplers in the same rounds as the model-based search (none without their
 * Python), each filling its cells in `cells` when it finishes; a failure of theirs is a note and
 * empty cells, never the experiment's end.
 */
function startOptuna(ctx: ComparisonContext, t: HeldOutTask, cells: OptunaCells): Promise<void>[] {
  const done = doneEvent(ctx, t);
  const runs: Promise<void>[] = [];
  const arms = optunaArmsOf(ctx.options);
  for (const [k, arm] of OPTUNA_ARMS.entries()) {
    cells.rows[arm.best4] = null;
    cells.rows[arm.best16] = null;
    if (!ctx.optuna || !arms.includes(arm)) continue;
    const agent = new OptunaAgent({ sampler: arm.sampler, seeded: arm.seeded, seed: t.seed, python: ctx.optuna.python });
    const run = join(t.dir, t.task, agent.name);
    const config = { ...taskConfig(t), agent: agent.name as AgentName, iterations: 4, group: 4 };
    runs.push(
      trainAgent(run, config, ctx.executor, { agent, cache: ctx.cache, scorer: ctx.scorer })
        .then(() => {
          const o = readRun(run);
          cells.rows[arm.best4] = best(o.proposals.slice(0, 4));
          cells.rows[arm.best16] = best(o.proposals);
          done(arm.label)();
        })
        .catch((err: Error) => {
          cells.notes[k] = oneLine(`${t.tag}${arm.label} on ${t.task} did not finish: ${err.message}`);
        })
        .finally(() => agent.close()),
    );
  }
  return runs;
}

/** The task's row on single scores, read from its finished runs; a method left out of the comparison has no score (null), never the floor. */
function readRow(ctx: ComparisonContext, t: HeldOutTask, optunaRows: Record<OptunaKey, number | null>): HeldOutRow {
  const everyMethod = comparesEveryMethod(ctx.options);
  const c = readRun(join(t.dir, t.task, 'controller'));
  const r = readRun(join(t.dir, t.task, 'random'));
  const s = everyMethod ? readRun(join(t.dir, t.task, 'search')).proposals : [];
  return {
    task: t.task,
    zeroShot: c.proposals[0] ?? null,
    controllerBest4: best(c.proposals.slice(0, 4)),
    controllerBest16: best(c.proposals),
    controllerAdaptBest16: everyMethod ? best(readRun(join(t.dir, t.task, 'controller-adapt')).proposals) : null,
    priorZeroShot: t.reference ? (readRun(join(t.dir, t.task, 'prior')).proposals[0] ?? null) : null,
    randomBest4: best(r.proposals.slice(0, 4)),
    randomBest16: best(r.proposals),
    searchBest4: best(s.slice(0, 4)),
    searchBest16: best(s),
    ...optunaRows,
    baseline: c.baseline,
  };
}

/** The task's row on confirmed scores: each compared row's pick trained again on the harness's confirmation seeds. */
async function confirmRow(ctx: ComparisonContext, t: HeldOutTask, baseline: number | null): Promise<HeldOutRow> {
  const message = `${t.tag}held-out ${t.task}: confirming the picks on the harness's ${CONFIRM_SEEDS} seeds`;
  ctx.onEvent?.({ type: 'phase', message, stage: t.task });
  const onEvent = taskEvents(ctx, t);
  const picks = await confirmPicks(join(t.dir, t.task), t.task, { executor: ctx.executor, cache: ctx.cache, scorer: ctx.scorer, seed: t.seed, onEvent });
  // A row not confirmed has no confirmed score (null); the baseline's is a mean over the harness's seeds already.
  const row = Object.fromEntries(METHODS.map(([k]) => [k, picks.confirmed[k as keyof typeof picks.confirmed] ?? null]));
  return { ...(row as Omit<HeldOutRow, 'task'>), task: t.task, baseline };
}

/** Compares the methods on one held-out task: the frozen controller first, then every other method at once, then the picks confirmed. */
export async function compareOnTask(ctx: ComparisonContext, t: HeldOutTask): Promise<TaskComparison> {
  announce(ctx, t);
  await runFrozen(ctx, t);
  // Every other method at once, so that one run's scoring, updates and round trips overlap the others' training
  // (each run's jobs depend only on its own agent and seeds; a spec two runs share is trained by either and scored the same).
  const optuna: OptunaCells = { rows: {} as Record<OptunaKey, number | null>, notes: [] };
  const runs = await startSearches(ctx, t);
  runs.push(...startOptuna(ctx, t, optuna));
  // Every run finishes (or fails) before the experiment goes on or stops: none is left training behind it.
  const settled = await Promise.allSettled(runs);
  ctx.notes.push(...optuna.notes.filter(Boolean));
  const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
  if (failed) throw failed.reason;
  const row = readRow(ctx, t, optuna.rows);
  const confirmed = ctx.options.confirmPicks !== false ? await confirmRow(ctx, t, row.baseline) : null;
  return { row, confirmed };
}

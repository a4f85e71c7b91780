/**
 * `rrl experiment transfer`: does a trainer agent trained on the outer reward write better
 * jobs than search that starts from nothing, also on tasks it never trained on?
 *
 * 1. Meta-train the controller on the train tasks (GRPO on the outer reward), and keep its weights
 *    as the repetition's `prior.json`; or, with `prior`, start from a saved prior and skip it.
 * 2. On every held-out task, with the controller frozen: its first proposal (zero-shot: the
 *    mode of its policy, its single best guess) and its best of 4 and 16 (that guess plus
 *    samples); the controller adapting (four rounds of 4 from the meta-trained weights, GRPO
 *    on the task's own rewards between rounds) for its best of 16; random search's best of 4
 *    and 16; the model-based search's best of 4 (its first round) and 16 (four rounds of 4,
 *    learning from its own rewards); Optuna's TPE and CMA-ES samplers (the library, by ask and
 *    tell: agents/optuna.ts), each plain and seeded with the task's baseline as its first trial,
 *    best of 4 and 16 (four rounds of 4, like the model-based search); and the task's baseline
 *    spec. Every job runs on the same engine, and identical specs share one cached result.
 *    Without a Python that has optuna and cmaes the Optuna rows are skipped, said in the report.
 * 3. With `confirmPicks` (the default), the held-out comparison again on confirmed scores: the
 *    spec each compared row picked, and the zero-shot spec, trained again on the harness's
 *    confirmation seeds (confirm-picks.ts); the report gives both comparisons.
 * 4. With `secrets`, all of it again under each further evaluation secret (held-out seeds and
 *    test rows change with the secret), each secret's comparisons reported on their own.
 */
import { CONFIRM_SEEDS } from './noise.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '../run/executor.js';
import { listTasks } from '../tasks/briefs.js';
import { builtInTaskIds } from '../tasks/extra.js';
import { FAMILIES, type FamilyDraw, registerFamilyTasks } from '../tasks/families/index.js';
import { initTf } from '../util/tf.js';
import { bridgePython } from '../inner/envs/gym-bridge.js';
import { oneLine } from '../spec/bounds.js';
import { Controller, type ControllerOptions } from './agents/controller.js';
import { type ControllerPrior, SHIPPED_PRIOR, controllerFromPrior, describePrior, loadPrior, priorFromRun, writePrior } from './agents/prior.js';
import { OptunaAgent, optunaMissing } from './agents/optuna.js';
import type { Agent } from './agents/types.js';
import { type AgentName, type LoopEvent, type TrainConfig, train } from './loop.js';
import type { FidelityConfig } from './fidelity.js';
import { comparisonSpec, learningCurveSpec, renderSvg } from './plots.js';
import {
  type FamilyCounts,
  type FamilyRow,
  type HeldOutRow,
  type HeldOutSummary,
  METHODS,
  OPTUNA_ARMS,
  type OptunaKey,
  type Verdict,
  best,
  familyOf,
  mean,
  meanOf,
  methodMeans,
  summarizeHeldOut,
} from './transfer-summary.js';

export { type FamilyCounts, type FamilyRow, type HeldOutRow, type Verdict, familyOf, summarizeHeldOut } from './transfer-summary.js';
import { Scorer } from './scoring/scorer-pool.js';
import { experimentSecrets } from './open-run.js';
import { confirmPicks, readHeldOutRun } from './confirm-picks.js';
import { transferMarkdown } from './transfer-report.js';
import type { RewardRuleName } from './reward.js';

/** Settings of the experiment. */
export interface TransferOptions {
  trainTasks: string[];
  heldOutTasks: string[];
  iterations: number;
  group: number;
  seed: number;
  /** The outer reward rule of meta-training (the presets: `improvement`). */
  reward?: { rule: RewardRuleName; lambda: number };
  /** Prune flat control jobs during meta-training (default off). */
  pruneFlat?: boolean;
  /** Successive halving within each meta-training group (default off; held-out comparisons stay at full budget). */
  fidelity?: FidelityConfig;
  /** Independent repetitions with seeds seed, seed + 1, …; the report gives means and spreads (default 1). */
  seeds?: number;
  /**
   * Evaluation secrets the whole experiment runs under (default 1): the installation's and
   * `secrets − 1` derived from it (`derivedEvalSecret`), each with every seed. The held-out
   * episode seeds and test splits change with the secret; the report gives each secret's verdicts.
   */
  secrets?: number;
  /**
   * Generated tasks (family, count, seed of the draw): a `train` family's tasks join `trainTasks`,
   * a `held-out` family's join `heldOutTasks` (see `resolveFamilies`); meta-training never sees a held-out family.
   */
  families?: FamilyDraw[];
  /** Tasks per meta-training iteration (absent: every train task in every iteration). */
  tasksPerIteration?: number;
  /** The Python of the Optuna rows, with optuna and cmaes (default: `RRL_PYTHON`, else the repository's .venv, else python3). */
  python?: string;
  /** The controller's initial anchor on the task's baseline spec, in logits (default: the controller's, 1; 0: no lean before meta-training). */
  anchor?: number;
  /** The controller's family-robust updates in meta-training (`ControllerOptions.robust`; default the controller's, 1; 0: off). */
  robust?: number;
  /**
   * The held-out comparison: `all` (default) every method; `random` the controller's rows (zero-shot,
   * best of 4 and 16, frozen), random search's and the baseline spec, without the learning searches
   * (the adapting controller, the model-based search, Optuna), at about a fifth of the jobs per task.
   */
  compare?: TransferCompare;
  /**
   * A saved controller prior to start from instead of meta-training (a prior file, or a transfer
   * repetition's or meta-training run's directory: `readPrior`); absent or null: meta-train.
   */
  prior?: string | null;
  /**
   * The comparison on confirmed scores as well (default true): on every held-out task, the spec
   * each compared row picked (its best of 16; random search's best of 4; the zero-shot spec)
   * trained again on the harness's `CONFIRM_SEEDS` confirmation seeds (`confirmPicks`), about a
   * third more jobs per task in the full preset; false: single scores only.
   */
  confirmPicks?: boolean;
}

/** Which methods the held-out comparison runs (`TransferOptions.compare`). */
export type TransferCompare = 'all' | 'random';

/**
 * Registers the options' family draws and returns the options with the drawn tasks added to
 * their side (train or held-out, by the family's split); throws on an unknown family.
 */
export function resolveFamilies(options: TransferOptions): TransferOptions {
  const train = [...options.trainTasks];
  const heldOut = [...options.heldOutTasks];
  for (const d of options.families ?? []) {
    const family = FAMILIES[d.family];
    if (!family) throw new Error(`unknown task family "${d.family}"; known families: ${Object.keys(FAMILIES).join(', ')}`);
    const ids = registerFamilyTasks(d.family, d.count, d.seed).map((t) => t.def.id);
    (family.split === 'train' ? train : heldOut).push(...ids.filter((id) => !train.includes(id) && !heldOut.includes(id)));
  }
  return { ...options, trainTasks: train, heldOutTasks: heldOut };
}

/**
 * Tasks drawn per family in the presets: `full` draws at least 200 train tasks and 6 per held-out
 * family (each compared 64 times), enough for a family's mean and its spread over tasks; `quick`
 * 8 per train family (each meta-training visit a task not seen before) and 3 per held-out family,
 * so that no single draw decides a family.
 */
export const PRESET_DRAWS = { full: { train: 30, heldOut: 6 }, quick: { train: 8, heldOut: 3 } } as const;

/**
 * The presets, both over the task families (every train family for meta-training, every held-out
 * family for the comparison): `full` draws 30 tasks per train family and 6 per held-out family and
 * meta-trains 20 iterations of 12 tasks × 4 proposals, comparing every method; `quick` draws 8 and 3,
 * meta-trains 3 iterations of 12 tasks × 4 (every update spans the families, as the full one's do)
 * and compares the frozen controller with random search only (`compare: 'random'`). The user's
 * registered tasks join either, on the side their files name.
 */
export function transferPreset(name: 'quick' | 'full'): TransferOptions {
  const builtIn = new Set(builtInTaskIds());
  const own = (s: 'train' | 'held-out'): string[] =>
    listTasks()
      .filter((t) => t.brief.split === s && !builtIn.has(t.brief.id) && familyOf(t.brief.id) === t.brief.id)
      .map((t) => t.brief.id);
  const draws = PRESET_DRAWS[name];
  const families = Object.values(FAMILIES).map((f) => ({ family: f.name, count: f.split === 'train' ? draws.train : draws.heldOut, seed: 1 }));
  // Scored on the hidden score alone: the cost-aware rule (λ 0.5) taught cheap jobs that scored half as well zero-shot (docs/transfer.md).
  const reward = { rule: 'improvement' as const, lambda: 0.5 };
  const common = { trainTasks: own('train'), heldOutTasks: own('held-out'), families, seed: 1, reward, group: 4 };
  return name === 'full'
    ? { ...common, iterations: 20, tasksPerIteration: 12 }
    : { ...common, iterations: 3, tasksPerIteration: 12, compare: 'random', prior: SHIPPED_PRIOR };
}

/** The experiment's result, as `--json` prints it. */
export interface TransferResult {
  options: TransferOptions;
  curve: { iteration: number; meanReward: number; meanNormalized: number | null; bestNormalized: number | null }[];
  /** Mean normalised hidden score per method on the held-out tasks (mean over seeds). */
  heldOut: Omit<HeldOutRow, 'task'>;
  /** Standard deviation of the per-seed held-out means (0 with one seed). */
  spread: Omit<HeldOutRow, 'task'>;
  /** Per held-out task, the mean over seeds. */
  rows: HeldOutRow[];
  /** Per held-out family (a hand-written task is its own family): the mean over its tasks and seeds, the spreads and the comparisons. */
  families: FamilyRow[];
  /** The comparisons on all held-out tasks (per seed and on the mean), and in how many held-out families each holds. */
  verdict: Verdict & { families: FamilyCounts };
  /** The zero-shot job paired by task with random search's best of 4 and every search's best of 16, with 90% intervals (`HeldOutSummary.paired`). */
  paired: HeldOutSummary['paired'];
  /** Per repetition (each seed under each secret, `secret` its index and `evalId` its identity): its held-out means, rows and curve. */
  perSeed: {
    seed: number;
    secret: number;
    evalId: string;
    heldOut: Omit<HeldOutRow, 'task'>;
    rows: HeldOutRow[];
    curve: TransferResult['curve'];
    /** The repetition's rows and means on confirmed scores (null without `confirmPicks`). */
    confirmed: { heldOut: Omit<HeldOutRow, 'task'>; rows: HeldOutRow[] } | null;
    /** Seconds the repetition took, summed over the invocations that ran it or read it back. */
    wallSeconds: number;
    /** True when this invocation read the repetition back finished (an earlier one ran it). */
    readBack: boolean;
  }[];
  /** Per evaluation secret: its identity, the held-out means over its seeds, and the comparisons under it alone. */
  secrets: { secret: number; evalId: string; heldOut: Omit<HeldOutRow, 'task'>; verdict: Verdict & { families: FamilyCounts } }[];
  /**
   * The same comparison on confirmed scores (`TransferOptions.confirmPicks`; null without): each
   * confirmed row's pick retrained on the harness's confirmation seeds, rows not confirmed null;
   * `secrets` the verdicts under each secret alone.
   */
  confirmed: (HeldOutSummary & { secrets: { secret: number; heldOut: Omit<HeldOutRow, 'task'>; verdict: Verdict & { families: FamilyCounts } }[] }) | null;
  files: { markdown: string; json: string; curveSvg: string; comparisonSvg: string };
  /** What did not run and why, one line each (the Optuna rows without their Python); also in the report. */
  notes: string[];
  wallSeconds: number;
}

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

/** Reads the normalised scores of a finished held-out run's proposals in proposal order (a failed job: 0, the floor of the scale), and its baseline's reference (`readHeldOutRun`). */
export function readRun(dir: string): { proposals: number[]; baseline: number | null } {
  const run = readHeldOutRun(dir);
  if (!run) throw new Error(`no finished held-out run in ${dir}`);
  return { proposals: run.proposals.map((p) => p.v), baseline: run.baseline };
}

/** What one seed of the experiment yields. */
interface SeedResult {
  seed: number;
  /** The secret's index (0: the installation's) and identity. */
  secret: number;
  evalId: string;
  curve: TransferResult['curve'];
  rows: HeldOutRow[];
  heldOut: Omit<HeldOutRow, 'task'>;
  confirmed: { heldOut: Omit<HeldOutRow, 'task'>; rows: HeldOutRow[] } | null;
}

/** The seconds an earlier invocation recorded for the finished repetition in `repDir` (its repetition.json), or null. */
function recordedWallSeconds(repDir: string): number | null {
  try {
    const w = (JSON.parse(readFileSync(join(repDir, 'repetition.json'), 'utf8')) as { wallSeconds?: unknown }).wallSeconds;
    return typeof w === 'number' && Number.isFinite(w) && w >= 0 ? w : null;
  } catch {
    return null;
  }
}

/** Meta-trains one controller and compares methods on the held-out tasks, for one seed, in `dir`. */
async function runSeed(
  dir: string,
  options: TransferOptions,
  seed: number,
  secret: { index: number; evalId: string; tag: string },
  cache: string,
  executor: Executor,
  optuna: { python: string } | null,
  scorer: Scorer,
  notes: string[],
  prior: ControllerPrior | null,
  onEvent?: (e: LoopEvent & { stage?: string }) => void,
): Promise<SeedResult> {
  const tag = secret.tag;
  const emit = (stage: string) => (e: LoopEvent) => onEvent?.({ ...e, stage: `${tag}${stage}` });

  // 1. Meta-training, or the prior's weights instead.
  const settings: ControllerOptions = {
    ...(prior ? prior.state.options : {}),
    seed,
    ...(options.anchor !== undefined ? { anchor: options.anchor } : {}),
    ...(options.robust !== undefined ? { robust: options.robust } : {}),
  };
  const { controller, curve } = prior
    ? { controller: await controllerFromPrior(prior, seed, settings), curve: [] }
    : await metaTrain(dir, options, seed, settings, tag, cache, executor, scorer, onEvent);

  // 2. Held-out tasks.
  const rows: HeldOutRow[] = [];
  const confirmedRows: HeldOutRow[] = [];
  // `compare: 'random'` leaves out the learning searches (runTransfer then passes no Optuna either).
  const everyMethod = (options.compare ?? 'all') === 'all';
  for (const [i, task] of options.heldOutTasks.entries()) {
    // No confirmation jobs: the comparison reads the jobs' scores, which a confirmation never changes (TrainConfig.confirm).
    const base = { tasks: [task], seed: seed * 1000 + i, confirm: false };
    const withOptuna = optuna ? ', Optuna TPE and CMA-ES (plain and seeded)' : '';
    const learning = everyMethod ? ', the adapting controller, model-based search' : '';
    onEvent?.({ type: 'phase', message: `${tag}held-out ${task}: controller (frozen), random search${learning}${withOptuna}`, stage: task });
    // The frozen controller first and alone: its run trains the task's baseline once, which every other run then takes from the cache.
    const frozen = { agent: new HeldOut(controller, false), cache, scorer, onEvent: emit(task) };
    await train(join(dir, task, 'controller'), { ...base, agent: 'controller', iterations: 1, group: 16 }, executor, frozen);
    // Then every other method at once, so that one run's scoring, updates and round trips overlap the others' training
    // (each run's jobs depend only on its own agent and seeds; a spec two runs share is trained by either and scored the same).
    const done = (label: string) => () => onEvent?.({ type: 'phase', message: `${tag}held-out ${task}: ${label} done`, stage: task });
    const quiet = { cache, scorer };
    const arms: Promise<void>[] = [];
    arms.push(train(join(dir, task, 'random'), { ...base, agent: 'random', iterations: 1, group: 16 }, executor, quiet).then(done('random search')));
    if (everyMethod) {
      // Adapting: a copy of the meta-trained controller (every task starts from the same weights) in rounds like the search's.
      const copy = new Controller(settings);
      await copy.load(await controller.state());
      const adapting = { agent: new HeldOut(copy, true), ...quiet };
      arms.push(
        train(join(dir, task, 'controller-adapt'), { ...base, agent: 'controller', iterations: 4, group: 4 }, executor, adapting).then(
          done('controller, adapting'),
        ),
      );
      arms.push(train(join(dir, task, 'search'), { ...base, agent: 'search', iterations: 4, group: 4 }, executor, quiet).then(done('model-based search')));
    }
    // Optuna's samplers in the same rounds as the model-based search; a failure of theirs is a note and empty cells, never the experiment's end.
    const optunaRows = {} as Record<OptunaKey, number | null>;
    const optunaNotes: string[] = [];
    for (const [k, arm] of OPTUNA_ARMS.entries()) {
      optunaRows[arm.best4] = null;
      optunaRows[arm.best16] = null;
      if (!optuna) continue;
      const agent = new OptunaAgent({ sampler: arm.sampler, seeded: arm.seeded, seed: base.seed, python: optuna.python });
      const run = join(dir, task, agent.name);
      const config = { ...base, agent: agent.name as AgentName, iterations: 4, group: 4 };
      arms.push(
        train(run, config, executor, { agent, ...quiet })
          .then(() => {
            const o = readRun(run);
            optunaRows[arm.best4] = best(o.proposals.slice(0, 4));
            optunaRows[arm.best16] = best(o.proposals);
            done(arm.label)();
          })
          .catch((err: Error) => {
            optunaNotes[k] = oneLine(`${tag}${arm.label} on ${task} did not finish: ${err.message}`);
          })
          .finally(() => agent.close()),
      );
    }
    // Every run finishes (or fails) before the experiment goes on or stops: none is left training behind it.
    const settled = await Promise.allSettled(arms);
    notes.push(...optunaNotes.filter(Boolean));
    const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (failed) throw failed.reason;
    const c = readRun(join(dir, task, 'controller'));
    const r = readRun(join(dir, task, 'random'));
    // A method left out of the comparison has no score (null), never the floor.
    const s = everyMethod ? readRun(join(dir, task, 'search')).proposals : [];
    rows.push({
      task,
      zeroShot: c.proposals[0] ?? null,
      controllerBest4: best(c.proposals.slice(0, 4)),
      controllerBest16: best(c.proposals),
      controllerAdaptBest16: everyMethod ? best(readRun(join(dir, task, 'controller-adapt')).proposals) : null,
      randomBest4: best(r.proposals.slice(0, 4)),
      randomBest16: best(r.proposals),
      searchBest4: best(s.slice(0, 4)),
      searchBest16: best(s),
      ...optunaRows,
      baseline: c.baseline,
    });
    if (options.confirmPicks !== false) {
      onEvent?.({ type: 'phase', message: `${tag}held-out ${task}: confirming the picks on the harness's ${CONFIRM_SEEDS} seeds`, stage: task });
      const picks = await confirmPicks(join(dir, task), task, { executor, cache, scorer, seed: base.seed, onEvent: emit(task) });
      // A row not confirmed has no confirmed score (null); the baseline's is a mean over the harness's seeds already.
      const row = Object.fromEntries(METHODS.map(([k]) => [k, picks.confirmed[k as keyof typeof picks.confirmed] ?? null]));
      confirmedRows.push({ ...(row as Omit<HeldOutRow, 'task'>), task, baseline: c.baseline });
    }
  }
  const confirmed = options.confirmPicks !== false ? { rows: confirmedRows, heldOut: methodMeans(confirmedRows) } : null;
  return { seed, secret: secret.index, evalId: secret.evalId, curve, rows, heldOut: methodMeans(rows), confirmed };
}

/** Meta-trains a controller on the train tasks in `dir/meta`, and saves its weights as `dir/prior.json`. */
async function metaTrain(
  dir: string,
  options: TransferOptions,
  seed: number,
  settings: ControllerOptions,
  tag: string,
  cache: string,
  executor: Executor,
  scorer: Scorer,
  onEvent?: (e: LoopEvent & { stage?: string }) => void,
): Promise<{ controller: Controller; curve: TransferResult['curve'] }> {
  const controller = new Controller(settings);
  const metaConfig: TrainConfig = {
    tasks: options.trainTasks,
    agent: 'controller',
    iterations: options.iterations,
    group: options.group,
    seed,
    ...(options.families ? { families: options.families.filter((d) => FAMILIES[d.family]?.split === 'train') } : {}),
    ...(options.tasksPerIteration ? { tasksPerIteration: options.tasksPerIteration } : {}),
    reward: options.reward,
    pruneFlat: options.pruneFlat ?? false,
    ...(options.fidelity ? { fidelity: options.fidelity } : {}),
  };
  const per = options.tasksPerIteration ? `, ${Math.min(options.tasksPerIteration, options.trainTasks.length)} per iteration` : '';
  onEvent?.({ type: 'phase', message: `${tag}meta-training the controller on ${options.trainTasks.length} train tasks${per}`, stage: 'meta' });
  const meta = await train(join(dir, 'meta'), metaConfig, executor, {
    agent: controller,
    cache,
    scorer,
    onEvent: (e) => onEvent?.({ ...e, stage: `${tag}meta` }),
  });
  writePrior(join(dir, 'prior.json'), priorFromRun(join(dir, 'meta'), `rrl experiment transfer, seed ${seed}`));
  return { controller, curve: meta.iterations };
}

/**
 * Runs the transfer experiment in `dir` with `executor`: one meta-training and comparison per
 * seed under each evaluation secret (in `dir/secret-K/seed-S`, each level only when there are
 * several), then one report of the means over these repetitions, with each secret's verdicts.
 */
export async function runTransfer(
  dir: string,
  requested: TransferOptions,
  executor: Executor,
  onEvent?: (e: LoopEvent & { stage?: string }) => void,
): Promise<TransferResult> {
  const t0 = performance.now();
  const options = resolveFamilies(requested);
  if (!options.prior && !options.trainTasks.length) throw new Error('the transfer experiment needs at least one train task');
  if (!options.heldOutTasks.length) throw new Error('the transfer experiment needs at least one held-out task');
  // A prior is read, and fitted to this code's controller, before anything trains.
  const prior = options.prior ? (await loadPrior(options.prior, options.seed)).prior : null;
  await initTf();
  mkdirSync(dir, { recursive: true });
  const cache = join(dir, 'cache.db');
  const nSeeds = options.seeds ?? 1;
  // The Optuna rows need a Python with optuna and cmaes; without one they are skipped, loudly.
  const notes: string[] = [];
  const python = options.python ?? bridgePython();
  const everyMethod = (options.compare ?? 'all') === 'all';
  const missing = everyMethod ? optunaMissing(python) : null;
  if (missing) {
    notes.push(`SKIPPED the Optuna rows (TPE, CMA-ES, seeded): ${missing}`);
    onEvent?.({ type: 'phase', message: `!! ${notes[0]}` });
  }
  if (!everyMethod) notes.push('Compared with random search only (compare: random): the adapting controller, the model-based search and Optuna did not run.');
  if (prior) onEvent?.({ type: 'phase', message: `no meta-training: the controller starts from the prior ${options.prior}: ${describePrior(prior)}` });
  // Every seed under every secret: the installation's first, then those derived from it.
  const nSecrets = options.secrets ?? 1;
  const perSeed: (SeedResult & { wallSeconds: number; readBack: boolean })[] = [];
  // One scorer pool for every run of the experiment: its threads load the hidden evaluation once, not once per run.
  const scorer = new Scorer();
  try {
    for (const { index: i, evalId, run: underSecret } of experimentSecrets(nSecrets)) {
      if (nSecrets > 1) onEvent?.({ type: 'phase', message: `evaluation secret ${i + 1} of ${nSecrets} (${evalId})` });
      for (let k = 0; k < nSeeds; k++) {
        const seed = options.seed + k;
        const secretDir = nSecrets > 1 ? join(dir, `secret-${i + 1}`) : dir;
        const tag = [nSecrets > 1 ? `secret ${i + 1}` : '', nSeeds > 1 ? `seed ${seed}` : ''].filter(Boolean).join(', ');
        const where = { index: i, evalId, tag: tag ? `${tag}: ` : '' };
        const repDir = nSeeds > 1 ? join(secretDir, `seed-${seed}`) : secretDir;
        const run = () => runSeed(repDir, options, seed, where, cache, executor, missing || !everyMethod ? null : { python }, scorer, notes, prior, onEvent);
        // A repetition an earlier invocation finished is read back from its runs (training only what that one did not): its time adds up over invocations.
        const recorded = recordedWallSeconds(repDir);
        const r0 = performance.now();
        const result = await underSecret(run);
        const wallSeconds = (recorded ?? 0) + (performance.now() - r0) / 1000;
        perSeed.push({ ...result, wallSeconds, readBack: recorded !== null });
        // Each repetition's figures as soon as it finishes: an experiment stopped later keeps them.
        writeFileSync(join(repDir, 'repetition.json'), JSON.stringify({ ...result, wallSeconds }, null, 2));
      }
    }
  } finally {
    await scorer.close();
  }
  const secrets = Array.from({ length: nSecrets }, (_, i) => {
    const mine = perSeed.filter((r) => r.secret === i);
    const s = summarizeHeldOut(options.heldOutTasks, mine);
    return { secret: i, evalId: mine[0].evalId, heldOut: s.heldOut, verdict: s.verdict };
  });
  // Means over seeds: the curve per iteration, each task's row, and the held-out means (with their spread).
  const curve = perSeed[0].curve.map((p, i) => {
    const at = perSeed.map((r) => r.curve[i]);
    return {
      iteration: p.iteration,
      meanReward: mean(at.map((q) => q.meanReward)),
      meanNormalized: meanOf(at.map((q) => q.meanNormalized)),
      bestNormalized: meanOf(at.map((q) => q.bestNormalized)),
    };
  });
  const { rows, heldOut, spread, families, verdict, paired } = summarizeHeldOut(options.heldOutTasks, perSeed);
  // The same on confirmed scores, overall and under each secret alone.
  const confirmedReps = perSeed.map((r) => r.confirmed);
  const confirmed: TransferResult['confirmed'] = confirmedReps.every((c) => c !== null)
    ? {
        ...summarizeHeldOut(options.heldOutTasks, confirmedReps as NonNullable<SeedResult['confirmed']>[]),
        secrets: Array.from({ length: nSecrets }, (_, i) => {
          const s = summarizeHeldOut(
            options.heldOutTasks,
            perSeed.filter((r) => r.secret === i).map((r) => r.confirmed as NonNullable<SeedResult['confirmed']>),
          );
          return { secret: i, heldOut: s.heldOut, verdict: s.verdict };
        }),
      }
    : null;

  // Report: markdown, JSON, SVG plots.
  const wallSeconds = (performance.now() - t0) / 1000;
  const markdown = transferMarkdown({
    options,
    prior: prior ? describePrior(prior) : null,
    curve,
    summary: { rows, heldOut, spread, families, verdict, paired },
    secrets,
    confirmed,
    perSeed,
    notes,
    wallSeconds,
    nSeeds,
    nSecrets,
  });
  const files = {
    markdown: join(dir, 'transfer.md'),
    json: join(dir, 'transfer.json'),
    curveSvg: join(dir, 'learning-curve.svg'),
    comparisonSvg: join(dir, 'held-out.svg'),
  };
  writeFileSync(files.markdown, markdown);
  const curveTitle = prior ? 'No meta-training in this run: the controller started from a prior' : undefined;
  writeFileSync(files.curveSvg, await renderSvg(learningCurveSpec(curve, curveTitle)));
  writeFileSync(
    files.comparisonSvg,
    await renderSvg(comparisonSpec(METHODS.filter(([k]) => heldOut[k] !== null).map(([k, label]) => ({ method: label, score: heldOut[k] as number })))),
  );
  const result: TransferResult = {
    options,
    curve,
    heldOut,
    spread,
    rows,
    families,
    verdict,
    paired,
    perSeed: perSeed.map((r) => ({
      seed: r.seed,
      secret: r.secret,
      evalId: r.evalId,
      heldOut: r.heldOut,
      rows: r.rows,
      curve: r.curve,
      confirmed: r.confirmed,
      wallSeconds: r.wallSeconds,
      readBack: r.readBack,
    })),
    secrets,
    confirmed,
    files,
    notes,
    wallSeconds,
  };
  writeFileSync(files.json, JSON.stringify(result, null, 2));
  return result;
}

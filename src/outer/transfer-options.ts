/**
 * The transfer experiment's settings, its presets and its result (experiment.ts runs it): what a
 * caller sets, and what `--json` prints.
 */
import { listTasks } from '../tasks/briefs.js';
import { builtInTaskIds } from '../tasks/extra.js';
import { FAMILIES, type FamilyDraw, registerFamilyTasks } from '../tasks/families/index.js';
import { corpusDir } from '../tasks/corpus/where.js';
import { registerCorpusTasks, selectCorpusTasks } from '../tasks/corpus/register.js';
import type { CorpusSplit } from '../tasks/corpus/splits.js';
import { FAMILIES_PRIOR, SHIPPED_PRIOR } from './agents/prior.js';
import type { FidelityConfig } from './fidelity.js';
import type { LoopEvent } from './loop.js';
import type { AimsRow } from './transfer-aims.js';
import type { RewardRuleName } from './reward.js';
import { type FamilyCounts, type FamilyRow, type HeldOutRow, type HeldOutSummary, type Verdict, familyOf } from './transfer-summary.js';

/** A listener of the experiment's events: the loop's, each with the stage (meta-training, a held-out task) it came from. */
export type TransferListener = (e: LoopEvent & { stage?: string }) => void;

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
  /**
   * A saved prior whose weights meta-training starts from (warm start; absent: small random
   * weights). Unlike `prior`, meta-training still runs.
   */
  init?: string;
  /** Tasks of the real-table corpus (`resolveCorpus`): the train packages' join meta-training, the compared packages' the comparison. */
  corpus?: CorpusOptions;
  /**
   * A second prior whose zero-shot job is a row of the comparison (`priorZeroShot`): what the
   * controller shipped before (default: none).
   */
  referencePrior?: string;
}

/** Which corpus tasks join the experiment (`TransferOptions.corpus`). */
export interface CorpusOptions {
  /** Which packages are compared: `validation` (every choice is made on them) or `held-out` (run once, at the end). */
  on: 'validation' | 'held-out';
  /** Tasks drawn per train package for meta-training (0: none). */
  trainPerPackage: number;
  /** Tasks drawn per compared package. */
  perPackage: number;
  /** The corpus directory (default: `corpusDir()`, `RRL_CORPUS`). */
  dir?: string;
}

/**
 * Which methods the held-out comparison runs (`TransferOptions.compare`): `all`, `random`, or
 * `corpus`: the controller's rows, random search's, Optuna's seeded TPE and CMA-ES, the baseline
 * spec and the reference prior's zero-shot job.
 */
export type TransferCompare = 'all' | 'random' | 'corpus';

/**
 * Registers the corpus tasks the options name and returns the options with them added: up to
 * `trainPerPackage` per train package to the train tasks, up to `perPackage` per compared package
 * (validation or held-out) to the held-out tasks, in package order; throws a `CorpusError` naming
 * the command that builds the corpus when there is none.
 */
export async function resolveCorpus(options: TransferOptions): Promise<TransferOptions> {
  const c = options.corpus;
  if (!c) return options;
  const dir = c.dir ?? corpusDir();
  const tasks = await registerCorpusTasks({ dir, splits: c.trainPerPackage > 0 ? ['train', c.on] : [c.on] });
  const byPackage = (split: CorpusSplit, n: number): string[] => selectCorpusTasks(tasks, { split, perPackage: n }).map((t) => t.id);
  const train = c.trainPerPackage > 0 ? byPackage('train', c.trainPerPackage) : [];
  const heldOut = byPackage(c.on, c.perPackage);
  return {
    ...options,
    trainTasks: [...options.trainTasks, ...train.filter((id) => !options.trainTasks.includes(id))],
    heldOutTasks: [...options.heldOutTasks, ...heldOut.filter((id) => !options.heldOutTasks.includes(id))],
  };
}

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
  // Scored on the hidden score alone: the cost-aware rule taught cheap jobs that scored worse zero-shot (results/transfer.md).
  const reward = { rule: 'improvement' as const, lambda: 0.5 };
  const common = { trainTasks: own('train'), heldOutTasks: own('held-out'), families, seed: 1, reward, group: 4 };
  return name === 'full'
    ? { ...common, iterations: 20, tasksPerIteration: 12 }
    : { ...common, iterations: 3, tasksPerIteration: 12, compare: 'random', prior: FAMILIES_PRIOR };
}

/** The presets' names: over the task families (`quick`, `full`) or the real-table corpus (`corpus-quick`, `corpus`). */
export const TRANSFER_PRESETS = ['quick', 'full', 'corpus-quick', 'corpus'] as const;
/** A preset's name. */
export type TransferPresetName = (typeof TRANSFER_PRESETS)[number];

/** Tasks drawn per corpus package in the corpus presets: train packages (meta-training) and compared ones. */
export const CORPUS_DRAWS = { corpus: { train: 8, compared: 8 }, 'corpus-quick': { train: 0, compared: 2 } } as const;

/**
 * The corpus presets (docs/transfer.md, "Transfer to real domains"): `corpus` meta-trains on up to
 * 8 tasks of each train package and 30 of each train family, 20 iterations of 12 tasks × 4
 * proposals, then compares on up to 8 tasks of each held-out package the controller's rows, random
 * search, Optuna's seeded TPE and CMA-ES, the baseline spec and the families prior's zero-shot job
 * (`compare: 'corpus'`); `corpus-quick` starts from the shipped prior (the corpus preset's own) and compares it with random
 * search on 2 tasks per held-out package. `--on validation` compares on the validation packages
 * instead, where every choice is made.
 */
export function corpusPreset(name: 'corpus' | 'corpus-quick', on: CorpusOptions['on'] = 'held-out'): TransferOptions {
  const draws = CORPUS_DRAWS[name];
  const reward = { rule: 'improvement' as const, lambda: 0.5 };
  const corpus = { on, trainPerPackage: draws.train, perPackage: draws.compared };
  const common = { trainTasks: [], heldOutTasks: [], seed: 1, reward, group: 4, corpus, referencePrior: FAMILIES_PRIOR };
  if (name === 'corpus-quick') {
    const { referencePrior: _, ...quick } = common;
    return { ...quick, families: [], iterations: 3, tasksPerIteration: 12, compare: 'random', prior: SHIPPED_PRIOR };
  }
  const families = Object.values(FAMILIES)
    .filter((f) => f.split === 'train')
    .map((f) => ({ family: f.name, count: PRESET_DRAWS.full.train, seed: 1 }));
  return { ...common, families, iterations: 20, tasksPerIteration: 12, compare: 'corpus' };
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
  /** The aims per package and on all compared tasks (`transfer-aims.ts`), on confirmed and single scores; null unless on corpus tasks or with `compare: 'corpus'`. */
  aims: { confirmed: AimsRow[] | null; single: AimsRow[] } | null;
  files: { markdown: string; json: string; curveSvg: string; comparisonSvg: string };
  /** What did not run and why, one line each (the Optuna rows without their Python); also in the report. */
  notes: string[];
  wallSeconds: number;
}

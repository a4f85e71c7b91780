/**
 * The transfer experiment's figures from its held-out rows: the methods it compares, the means and
 * spreads per method over tasks, families and repetitions, and the comparisons (verdicts) with the
 * number of held-out families where each holds. Pure functions of the rows; `experiment.ts` runs
 * the experiment and writes the report.
 */
import { FAMILIES } from '../tasks/families/index.js';
import type { OptunaSampler } from './agents/optuna.js';
import { corpusFamilyOf } from '../tasks/corpus/register.js';
import { type PairedDifference, pairedDifference, pairedVerdict } from '../util/paired-difference.js';

/**
 * The family a task was drawn from (`<family>-fam-<seed>-<n>`), a corpus task's package
 * (`corpus-<package>`, when registered in this thread), or the task's own id for a hand-written task.
 */
export function familyOf(task: string): string {
  const m = /^(.*)-fam-\d+-\d+$/.exec(task);
  return m && FAMILIES[m[1]] ? m[1] : (corpusFamilyOf(task) ?? task);
}

/** One held-out task's row (or one family's: the mean over its tasks). */
export interface HeldOutRow {
  task: string;
  zeroShot: number | null;
  controllerBest4: number | null;
  controllerBest16: number | null;
  /** The reference prior's zero-shot job (`TransferOptions.referencePrior`: the controller shipped before). */
  priorZeroShot: number | null;
  /** The controller's best of 16 when it keeps learning on the task: four rounds of four, GRPO between rounds. */
  controllerAdaptBest16: number | null;
  randomBest4: number | null;
  randomBest16: number | null;
  searchBest4: number | null;
  searchBest16: number | null;
  /** Optuna's TPE sampler: its first round of 4 (random start-up), and four rounds of 4. */
  optunaTpeBest4: number | null;
  optunaTpeBest16: number | null;
  /** Optuna's CMA-ES sampler (categorical decisions sampled independently, as Optuna does). */
  optunaCmaesBest4: number | null;
  optunaCmaesBest16: number | null;
  /** The same samplers with the task's baseline spec as the study's first trial. */
  optunaTpeSeededBest4: number | null;
  optunaTpeSeededBest16: number | null;
  optunaCmaesSeededBest4: number | null;
  optunaCmaesSeededBest16: number | null;
  baseline: number | null;
}

/**
 * The comparisons the report makes, on all held-out tasks or on one held-out family's; null where a
 * method a comparison needs did not run (`TransferOptions.compare` left it out, or it has no score).
 */
export interface Verdict {
  /** The zero-shot job above random search's best of 4 in every seed (on the seed's mean). */
  zeroShotBeatsRandom4EverySeed: boolean | null;
  /** The adapting controller's best of 16 at least level with the model-based search's best of 16. */
  adaptBest16AtLeastSearchBest16: boolean | null;
  /** The zero-shot job at least level with random search's best of 16. */
  zeroShotAtLeastRandomBest16: boolean | null;
  /** The zero-shot job at least level with the model-based search's best of 16. */
  zeroShotAtLeastSearchBest16: boolean | null;
  /** The zero-shot job at least level with both searches' best of 16. */
  zeroShotAtLeastBothBest16: boolean | null;
  /**
   * The zero-shot job at least level with every search's best of 16 that ran: random, the model-based
   * search and each Optuna row (null when the model-based search did not run: random search alone is not "every search").
   */
  zeroShotAtLeastEveryBest16: boolean | null;
}

/** One held-out family's row: the mean per method over its tasks and seeds (`task` names the family), with its spreads and comparisons. */
export interface FamilyRow extends HeldOutRow {
  /** The family's held-out tasks. */
  tasks: number;
  /** Per method, the standard deviation over the family's tasks of each task's mean over seeds (0 with one task). */
  taskSpread: Omit<HeldOutRow, 'task'>;
  /** Per method, the standard deviation over seeds of the family's mean in each seed (0 with one seed). */
  seedSpread: Omit<HeldOutRow, 'task'>;
  /** Per seed, the family's mean per method. */
  perSeed: Omit<HeldOutRow, 'task'>[];
  verdict: Verdict;
}

/** In how many of the held-out families each comparison holds (a comparison not made counts as not holding). */
export type FamilyCounts = { heldOutFamilies: number } & Record<keyof Verdict, number>;

/** The zero-shot job against each compared row, paired by task, on one family's tasks (or on all held-out tasks: `family` 'all'). */
export interface PairedComparison {
  family: string;
  tasks: number;
  /**
   * Per row of `PAIRED_AGAINST`: zero-shot minus that row over the tasks (each task's mean over the
   * repetitions), with its 90% t-interval; null where the row did not run.
   */
  vs: Partial<Record<keyof Omit<HeldOutRow, 'task'>, PairedDifference | null>>;
  /**
   * True when no search's best of 16 is above the zero-shot job beyond the tasks' noise (no 90%
   * interval wholly below 0); null when the model-based search did not run or the family has one task.
   */
  notBelowEveryBest16: boolean | null;
}

/** What `summarizeHeldOut` gives: per task, overall (with the spread over repetitions), per family, and the verdicts. */
export interface HeldOutSummary {
  rows: HeldOutRow[];
  heldOut: Omit<HeldOutRow, 'task'>;
  spread: Omit<HeldOutRow, 'task'>;
  families: FamilyRow[];
  verdict: Verdict & { families: FamilyCounts };
  /** The zero-shot job paired by task with each compared row: per family, on all tasks, and in how many families it is not below every search's best of 16. */
  paired: { families: PairedComparison[]; all: PairedComparison; notBelowEveryBest16: number };
}

export const METHODS: [keyof Omit<HeldOutRow, 'task'>, string][] = [
  ['zeroShot', 'controller zero-shot'],
  ['controllerBest4', 'controller best of 4'],
  ['controllerBest16', 'controller best of 16'],
  ['controllerAdaptBest16', 'controller best of 16, adapting'],
  ['priorZeroShot', 'reference prior zero-shot'],
  ['randomBest4', 'random best of 4'],
  ['randomBest16', 'random best of 16'],
  ['searchBest4', 'search best of 4'],
  ['searchBest16', 'search best of 16'],
  ['optunaTpeBest4', 'optuna TPE best of 4'],
  ['optunaTpeBest16', 'optuna TPE best of 16'],
  ['optunaCmaesBest4', 'optuna CMA-ES best of 4'],
  ['optunaCmaesBest16', 'optuna CMA-ES best of 16'],
  ['optunaTpeSeededBest4', 'optuna TPE seeded best of 4'],
  ['optunaTpeSeededBest16', 'optuna TPE seeded best of 16'],
  ['optunaCmaesSeededBest4', 'optuna CMA-ES seeded best of 4'],
  ['optunaCmaesSeededBest16', 'optuna CMA-ES seeded best of 16'],
  ['baseline', 'baseline spec'],
];

/** The Optuna rows: each sampler plain and seeded, its run directory and agent, and its two columns. */
export type OptunaKey = Extract<keyof HeldOutRow, `optuna${string}`>;
export const OPTUNA_ARMS: { sampler: OptunaSampler; seeded: boolean; label: string; best4: OptunaKey; best16: OptunaKey }[] = [
  { sampler: 'tpe', seeded: false, label: 'optuna TPE', best4: 'optunaTpeBest4', best16: 'optunaTpeBest16' },
  { sampler: 'cmaes', seeded: false, label: 'optuna CMA-ES', best4: 'optunaCmaesBest4', best16: 'optunaCmaesBest16' },
  { sampler: 'tpe', seeded: true, label: 'optuna TPE seeded', best4: 'optunaTpeSeededBest4', best16: 'optunaTpeSeededBest16' },
  { sampler: 'cmaes', seeded: true, label: 'optuna CMA-ES seeded', best4: 'optunaCmaesSeededBest4', best16: 'optunaCmaesSeededBest16' },
];

/** The rows the zero-shot job is paired with by task: random search's best of 4, and every search's best of 16. */
export const PAIRED_AGAINST: (keyof Omit<HeldOutRow, 'task'>)[] = ['randomBest4', 'randomBest16', 'searchBest16', ...OPTUNA_ARMS.map((a) => a.best16)];

/** The zero-shot job paired by task with each row of `PAIRED_AGAINST` on `rows` (see `PairedComparison`). */
export function pairedComparison(family: string, rows: HeldOutRow[]): PairedComparison {
  const zs = rows.map((r) => r.zeroShot);
  const vs = Object.fromEntries(
    PAIRED_AGAINST.map((k) => [
      k,
      pairedDifference(
        zs,
        rows.map((r) => r[k]),
      ),
    ]),
  ) as PairedComparison['vs'];
  const best16 = PAIRED_AGAINST.filter((k) => k !== 'randomBest4').map((k) => pairedVerdict(vs[k] ?? null));
  const ran = best16.filter((v) => v !== null);
  return {
    family,
    tasks: rows.length,
    vs,
    notBelowEveryBest16: pairedVerdict(vs.searchBest16 ?? null) === null ? null : ran.every((v) => v !== 'below'),
  };
}

/** The comparisons, in the report's words. */
export const VERDICTS: [keyof Verdict, string][] = [
  ['zeroShotBeatsRandom4EverySeed', 'zero-shot > random best of 4, every seed'],
  ['adaptBest16AtLeastSearchBest16', 'adapting best of 16 ≥ search best of 16'],
  ['zeroShotAtLeastRandomBest16', 'zero-shot ≥ random best of 16'],
  ['zeroShotAtLeastSearchBest16', 'zero-shot ≥ search best of 16'],
  ['zeroShotAtLeastBothBest16', 'zero-shot ≥ both best of 16'],
  ['zeroShotAtLeastEveryBest16', 'zero-shot ≥ every search’s best of 16 (Optuna’s included)'],
];

export function best(scores: (number | null)[]): number | null {
  const xs = scores.filter((s): s is number => s !== null);
  return xs.length ? Math.max(...xs) : null;
}

export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]): number => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));
/** Mean of the non-null values, or null when there are none. */
export const meanOf = (vs: (number | null)[]): number | null => {
  const xs = vs.filter((v): v is number => v !== null);
  return xs.length ? mean(xs) : null;
};
export const methodMeans = (rows: Omit<HeldOutRow, 'task'>[]): Omit<HeldOutRow, 'task'> =>
  Object.fromEntries(METHODS.map(([k]) => [k, meanOf(rows.map((r) => r[k]))])) as Omit<HeldOutRow, 'task'>;

/** Per method, the standard deviation of the non-null values (null when there are none). */
const methodSpreads = (rows: Omit<HeldOutRow, 'task'>[]): Omit<HeldOutRow, 'task'> =>
  Object.fromEntries(
    METHODS.map(([k]) => {
      const xs = rows.map((r) => r[k]).filter((v): v is number => v !== null);
      return [k, xs.length ? sd(xs) : null];
    }),
  ) as Omit<HeldOutRow, 'task'>;

/** The comparisons on a set of held-out tasks: `mean` over seeds, `seeds` the same set's mean in each seed. */
function compare(mean: Omit<HeldOutRow, 'task'>, seeds: Omit<HeldOutRow, 'task'>[]): Verdict {
  // A comparison with a method that has no score is not made (null), never counted as lost.
  const atLeast = (a: number | null, b: number | null, orEqual = true): boolean | null => (a === null || b === null ? null : orEqual ? a >= b : a > b);
  // All of several comparisons: false where one fails, else null where one was not made.
  const all = (vs: (boolean | null)[]): boolean | null => (vs.includes(false) ? false : vs.includes(null) ? null : true);
  const random = atLeast(mean.zeroShot, mean.randomBest16);
  const search = atLeast(mean.zeroShot, mean.searchBest16);
  const ran = [random, search, ...OPTUNA_ARMS.map((a) => atLeast(mean.zeroShot, mean[a.best16]))].filter((v) => v !== null);
  return {
    zeroShotBeatsRandom4EverySeed: all(seeds.map((r) => atLeast(r.zeroShot, r.randomBest4, false))),
    adaptBest16AtLeastSearchBest16: atLeast(mean.controllerAdaptBest16, mean.searchBest16),
    zeroShotAtLeastRandomBest16: random,
    zeroShotAtLeastSearchBest16: search,
    zeroShotAtLeastBothBest16: all([random, search]),
    zeroShotAtLeastEveryBest16: search === null ? null : ran.every(Boolean),
  };
}

/**
 * The report's figures from each seed's rows (one per held-out task, in `heldOutTasks` order):
 * each task's mean over seeds; the mean over all held-out tasks with its spread over seeds; per
 * held-out family its mean over its tasks and seeds, its spread over tasks and over seeds and the
 * comparisons on it; and the comparisons on all tasks with, for each, the number of families where it holds.
 */
export function summarizeHeldOut(heldOutTasks: string[], perSeed: { heldOut: Omit<HeldOutRow, 'task'>; rows: HeldOutRow[] }[]): HeldOutSummary {
  const rows: HeldOutRow[] = heldOutTasks.map((task, i) => ({ task, ...methodMeans(perSeed.map((r) => r.rows[i])) }));
  const heldOut = methodMeans(perSeed.map((r) => r.heldOut));
  const spread = methodSpreads(perSeed.map((r) => r.heldOut));
  const families: FamilyRow[] = [...new Set(heldOutTasks.map(familyOf))].map((family) => {
    const mine = (rs: HeldOutRow[]): HeldOutRow[] => rs.filter((r) => familyOf(r.task) === family);
    const mean = methodMeans(mine(rows));
    const seeds = perSeed.map((r) => methodMeans(mine(r.rows)));
    return {
      task: family,
      ...mean,
      tasks: mine(rows).length,
      taskSpread: methodSpreads(mine(rows)),
      seedSpread: methodSpreads(seeds),
      perSeed: seeds,
      verdict: compare(mean, seeds),
    };
  });
  const overall = compare(
    heldOut,
    perSeed.map((r) => r.heldOut),
  );
  const counts = Object.fromEntries(
    (Object.keys(overall) as (keyof Verdict)[]).map((k) => [k, families.filter((f) => f.verdict[k] === true).length]),
  ) as Record<keyof Verdict, number>;
  const paired = families.map((f) =>
    pairedComparison(
      f.task,
      rows.filter((r) => familyOf(r.task) === f.task),
    ),
  );
  return {
    rows,
    heldOut,
    spread,
    families,
    verdict: { ...overall, families: { heldOutFamilies: families.length, ...counts } },
    paired: { families: paired, all: pairedComparison('all', rows), notBelowEveryBest16: paired.filter((p) => p.notBelowEveryBest16 === true).length },
  };
}

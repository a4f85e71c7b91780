/**
 * The aims of the transfer experiment on real domains (the corpus presets), judged per compared
 * package and on all compared tasks, paired by task (each task's mean over the repetitions) with
 * 90 % Student-t intervals of the difference:
 * - the zero-shot job at least level with every search's best of 16 that ran (random search,
 *   Optuna's seeded TPE and CMA-ES): no interval's lower end below `LEVEL_MARGIN`;
 * - the zero-shot job above the baseline spec and above the reference prior's zero-shot job beyond
 *   the noise: the interval wholly above 0;
 * - the controller's best of 4 at least level with every search's best of 16 (the same margin).
 * An aim whose rows did not run, or with fewer than 2 tasks (no interval), is not judged (null).
 */
import { type PairedDifference, pairedDifference } from '../util/paired-difference.js';
import { type HeldOutRow, familyOf } from './transfer-summary.js';

/** How far below 0 a difference's 90 % interval may reach for "at least level". */
export const LEVEL_MARGIN = -0.01;

/** The searches' best-of-16 rows an aim compares with (those that ran). */
export const AIM_SEARCHES = ['randomBest16', 'optunaTpeSeededBest16', 'optunaCmaesSeededBest16'] as const;

/** The paired differences behind the aims, and each aim's verdict, on one set of tasks. */
export interface AimsRow {
  /** A package's family (`corpus-<package>`), or `all`. */
  family: string;
  tasks: number;
  /** Zero-shot minus each row. */
  zeroShot: Partial<Record<(typeof AIM_SEARCHES)[number] | 'baseline' | 'priorZeroShot', PairedDifference | null>>;
  /** Best of 4 minus each search's best of 16. */
  best4: Partial<Record<(typeof AIM_SEARCHES)[number], PairedDifference | null>>;
  /** Zero-shot at least level with every search's best of 16. */
  zeroShotLevelWithBest16: boolean | null;
  zeroShotAboveBaseline: boolean | null;
  zeroShotAbovePrior: boolean | null;
  /** Best of 4 at least level with every search's best of 16. */
  best4LevelWithBest16: boolean | null;
}

/** The aims, in the report's words. */
export const AIMS: [keyof Pick<AimsRow, 'zeroShotLevelWithBest16' | 'zeroShotAboveBaseline' | 'zeroShotAbovePrior' | 'best4LevelWithBest16'>, string][] = [
  ['zeroShotLevelWithBest16', `zero-shot ≥ every search's best of 16 (interval not below ${LEVEL_MARGIN})`],
  ['zeroShotAboveBaseline', 'zero-shot > baseline spec (interval above 0)'],
  ['zeroShotAbovePrior', "zero-shot > reference prior's zero-shot (interval above 0)"],
  ['best4LevelWithBest16', `best of 4 ≥ every search's best of 16 (interval not below ${LEVEL_MARGIN})`],
];

const series = (rows: HeldOutRow[], k: keyof Omit<HeldOutRow, 'task'>): (number | null)[] => rows.map((r) => r[k]);

/** Whether every judged difference's interval starts at or above `floor` (strictly above with `strict`); null when none is judged. */
function holds(ds: (PairedDifference | null | undefined)[], floor: number, strict: boolean): boolean | null {
  const judged = ds.filter((d): d is PairedDifference & { lo: number } => !!d && d.lo !== null);
  if (!judged.length) return null;
  return judged.every((d) => (strict ? d.lo > floor : d.lo >= floor));
}

/** The aims on `rows` (one per task), named `family`. */
export function aimsOf(family: string, rows: HeldOutRow[]): AimsRow {
  const zs = series(rows, 'zeroShot');
  const b4 = series(rows, 'controllerBest4');
  const zeroShot: AimsRow['zeroShot'] = {};
  const best4: AimsRow['best4'] = {};
  for (const k of AIM_SEARCHES) {
    zeroShot[k] = pairedDifference(zs, series(rows, k));
    best4[k] = pairedDifference(b4, series(rows, k));
  }
  zeroShot.baseline = pairedDifference(zs, series(rows, 'baseline'));
  zeroShot.priorZeroShot = pairedDifference(zs, series(rows, 'priorZeroShot'));
  return {
    family,
    tasks: rows.length,
    zeroShot,
    best4,
    zeroShotLevelWithBest16: holds(
      AIM_SEARCHES.map((k) => zeroShot[k]),
      LEVEL_MARGIN,
      false,
    ),
    zeroShotAboveBaseline: holds([zeroShot.baseline], 0, true),
    zeroShotAbovePrior: holds([zeroShot.priorZeroShot], 0, true),
    best4LevelWithBest16: holds(
      AIM_SEARCHES.map((k) => best4[k]),
      LEVEL_MARGIN,
      false,
    ),
  };
}

/** Whether an experiment judges the aims: on corpus tasks, or with the corpus presets' comparison. */
export function hasAims(options: { compare?: string; corpus?: unknown }): boolean {
  return options.corpus !== undefined || options.compare === 'corpus';
}

/** The aims per family (package) of `rows` and on all of them (last). */
export function aimsByFamily(rows: HeldOutRow[]): AimsRow[] {
  const families = [...new Set(rows.map((r) => familyOf(r.task)))];
  return [
    ...families.map((f) =>
      aimsOf(
        f,
        rows.filter((r) => familyOf(r.task) === f),
      ),
    ),
    aimsOf('all', rows),
  ];
}

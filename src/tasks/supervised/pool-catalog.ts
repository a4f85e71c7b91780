/**
 * The standard source catalog (`catalog.ts`) with its options chosen from the data, for tasks made
 * from a real table (the corpus, task files): the clean sample a fifth of the pool (20 to 1,000
 * examples, at most the pool); label noise 25 % of labels for two classes, 30 % for more, 0.5 target std for
 * regression; the shifted source along the numeric feature with the most distinct values among
 * those at most 20 % missing (no shifted source without one); the imbalanced source (classification)
 * keeping the largest class whole and 30 % of each other. And the metric: accuracy, macro-F1 when
 * the smallest class is under 20 % of the rows (always predicting the majority class must not
 * score well), R² for regression.
 */
import type { Dataset } from '../../spec/data.js';
import { type CatalogOptions, standardCatalog } from './catalog.js';
import type { SourceRecipe, SupervisedMetricName } from './define.js';

/** Share of the smallest class under which a classification task is scored by macro-F1. */
export const MINORITY_SHARE = 0.2;
/** Most missing cells of a feature the shifted source may follow. */
const SHIFT_MAX_MISSING = 0.2;

/** Rows of each class. */
function classCounts(d: Dataset): number[] {
  const counts = new Array<number>(d.classes?.length ?? 0).fill(0);
  if (d.kind === 'classification') for (const y of d.y) counts[y]++;
  return counts;
}

/** The metric of a task on `d`: accuracy or macro-F1 by the smallest class's share; R² for regression. */
export function poolMetric(d: Dataset): SupervisedMetricName {
  if (d.kind === 'regression') return 'r2';
  const counts = classCounts(d);
  return Math.min(...counts) < MINORITY_SHARE * d.y.length ? 'macro-f1' : 'accuracy';
}

/** The numeric feature a shifted source follows: most distinct values among those at most 20 % missing; null when none. */
export function shiftFeature(d: Dataset): string | null {
  let best: { name: string; distinct: number } | null = null;
  d.features.forEach((name, j) => {
    if (d.columns?.[j]?.kind === 'categorical') return;
    const values = d.x.map((r) => r[j]);
    const present = values.filter((v) => !Number.isNaN(v));
    if (present.length < (1 - SHIFT_MAX_MISSING) * values.length) return;
    const distinct = new Set(present).size;
    if (distinct >= 3 && (!best || distinct > best.distinct)) best = { name, distinct };
  });
  return (best as { name: string } | null)?.name ?? null;
}

/** The catalog's options as chosen from `d` and the pool's size. */
export function poolCatalogOptions(d: Dataset, poolSize: number): CatalogOptions & { shifted: boolean } {
  const shift = shiftFeature(d);
  const k = d.classes?.length ?? 0;
  const counts = classCounts(d);
  const largest = counts.indexOf(counts.reduce((a, b) => Math.max(a, b), 0));
  return {
    poolSize,
    cleanSize: Math.min(poolSize, Math.max(20, Math.min(1000, Math.round(poolSize / 5)))),
    noise: d.kind === 'regression' ? 0.5 : k === 2 ? 0.25 : 0.3,
    shiftFeature: shift ?? d.features[0],
    shiftWords: shift ? `only rows whose ${shift} lies in its lowest 40%` : '',
    ...(d.kind === 'classification' ? { imbalance: counts.map((_, c) => (c === largest ? 1 : 0.3)) } : {}),
    shifted: shift !== null,
  };
}

/** The standard catalog of a task on `d` whose training pool has `poolSize` rows. */
export function poolCatalog(d: Dataset, poolSize: number): SourceRecipe[] {
  const o = poolCatalogOptions(d, poolSize);
  const recipes = standardCatalog(o);
  return o.shifted ? recipes : recipes.filter((r) => r.id !== 'shifted');
}

/**
 * Small descriptive statistics over datasets (no randomness).
 */
import type { Dataset, FeatureInfo } from './types.js';

/** Arithmetic mean (NaN for an empty list). */
export function mean(v: readonly number[]): number {
  let s = 0;
  for (const a of v) s += a;
  return s / v.length;
}

/** Population standard deviation (divides by n). */
export function std(v: readonly number[]): number {
  const m = mean(v);
  let s = 0;
  for (const a of v) s += (a - m) * (a - m);
  return Math.sqrt(s / v.length);
}

/** Quantile `q` in [0, 1] with linear interpolation between order statistics (numpy's default, type 7). */
export function quantile(v: readonly number[], q: number): number {
  if (v.length === 0) throw new RangeError('quantile of an empty list');
  const s = [...v].sort((a, b) => a - b);
  const h = (s.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return s[lo] + (h - lo) * (s[hi] - s[lo]);
}

/** The values of one feature column, by name. */
export function column(d: Dataset, feature: string): number[] {
  const j = d.features.indexOf(feature);
  if (j < 0) throw new RangeError(`dataset ${d.name} has no feature '${feature}' (features: ${d.features.join(', ')})`);
  return d.x.map((row) => row[j]);
}

/** Row count per class index (classification only). */
export function classCounts(d: Dataset): number[] {
  if (d.kind !== 'classification' || !d.classes) throw new RangeError(`dataset ${d.name} is not a classification dataset`);
  const counts = new Array<number>(d.classes.length).fill(0);
  for (const c of d.y) counts[c]++;
  return counts;
}

/** Per-feature description, range, mean and standard deviation — the variables section of a brief. */
export function featureInfo(d: Dataset): FeatureInfo[] {
  return d.features.map((name, j) => {
    const v = d.x.map((row) => row[j]);
    let min = v.length ? Infinity : NaN;
    let max = v.length ? -Infinity : NaN;
    for (const a of v) {
      if (a < min) min = a;
      if (a > max) max = a;
    }
    return {
      name,
      description: d.descriptions[name] ?? '',
      min,
      max,
      mean: mean(v),
      std: std(v),
    };
  });
}

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

/**
 * Pearson's correlation over the rows where both cells are numbers (NaN, text and null are
 * missing); 0 with fewer than 3 such rows or when either column is constant there.
 */
export function correlation(a: readonly unknown[], b: readonly unknown[]): number {
  let n = 0;
  let sa = 0;
  let sb = 0;
  let saa = 0;
  let sbb = 0;
  let sab = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x !== 'number' || typeof y !== 'number' || Number.isNaN(x) || Number.isNaN(y)) continue;
    n++;
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  if (n < 3) return 0;
  const va = saa - (sa * sa) / n;
  const vb = sbb - (sb * sb) / n;
  return va <= 1e-12 * Math.max(1, saa) || vb <= 1e-12 * Math.max(1, sbb) ? 0 : (sab - (sa * sb) / n) / Math.sqrt(va * vb);
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

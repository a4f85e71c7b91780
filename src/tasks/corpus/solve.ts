/**
 * The one-feature filter: a task that a single feature solves teaches nothing about training. Each
 * feature alone is fitted as a rule — the mean or majority class per level of a categorical
 * feature, per one of up to 32 quantile bins of a numeric one, missing cells their own bin — on a
 * fixed 70 % of the rows, and scored on the other 30 % normalised as the hidden evaluation is
 * (accuracy: 0 for the majority class, 1 perfect; regression: R² against the training mean).
 * Cheap and deterministic: the split is a hash of the row index.
 */
import type { Dataset } from '../../spec/data.js';
import { mixSeed } from '../../util/rng.js';

/** The normalised validation score from which one feature solves a task. */
export const SOLVED_SCORE = 0.95;
/** Most bins of a numeric feature's rule. */
const BINS = 32;

/** The bin of each row for feature `j`: its level, or its quantile bin; missing cells the last bin. */
function bins(d: Dataset, j: number, train: boolean[]): { bin: number[]; count: number } {
  const col = d.columns?.[j];
  const values = d.x.map((r) => r[j]);
  if (col?.kind === 'categorical') return { bin: values.map((v) => (Number.isNaN(v) ? col.levels.length : v)), count: col.levels.length + 1 };
  const sorted = Float64Array.from(values.filter((v, i) => train[i] && !Number.isNaN(v))).sort();
  const cuts: number[] = [];
  for (let k = 1; k < BINS; k++) {
    const c = sorted[Math.floor((k * sorted.length) / BINS)];
    if (c !== undefined && c !== cuts[cuts.length - 1]) cuts.push(c);
  }
  const binOf = (v: number): number => {
    if (Number.isNaN(v)) return cuts.length + 1;
    let lo = 0;
    let hi = cuts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (v < cuts[mid]) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  return { bin: values.map(binOf), count: cuts.length + 2 };
}

/** The rule's prediction per bin, fitted on the training rows; `fallback` for a bin no training row fell in. */
function fit(d: Dataset, bin: number[], count: number, train: boolean[], fallback: number): number[] {
  if (d.kind === 'regression') {
    const sum = new Array<number>(count).fill(0);
    const n = new Array<number>(count).fill(0);
    d.y.forEach((y, i) => {
      if (!train[i]) return;
      sum[bin[i]] += y;
      n[bin[i]]++;
    });
    return sum.map((s, b) => (n[b] ? s / n[b] : fallback));
  }
  const k = d.classes!.length;
  const votes = Array.from({ length: count }, () => new Array<number>(k).fill(0));
  d.y.forEach((y, i) => {
    if (train[i]) votes[bin[i]][y]++;
  });
  return votes.map((v) => (v.some((c) => c > 0) ? v.indexOf(Math.max(...v)) : fallback));
}

/** The normalised score of predictions on the validation rows. */
function score(d: Dataset, pred: (i: number) => number, valid: number[], base: number): number {
  if (d.kind === 'regression') {
    let res = 0;
    let tot = 0;
    for (const i of valid) {
      res += (d.y[i] - pred(i)) ** 2;
      tot += (d.y[i] - base) ** 2;
    }
    return tot === 0 ? 0 : 1 - res / tot;
  }
  const acc = valid.filter((i) => pred(i) === d.y[i]).length / valid.length;
  const trivial = valid.filter((i) => d.y[i] === base).length / valid.length;
  return trivial >= 1 ? 0 : (acc - trivial) / (1 - trivial);
}

/** The fixed training share of the rows (70 %), by a hash of the row index. */
export function trainRows(n: number): boolean[] {
  return Array.from({ length: n }, (_, i) => (mixSeed(i, 0x501e) >>> 0) % 10 < 7);
}

/** The feature that alone solves the task (normalised validation score ≥ 0.95) with its score, or null. */
export function oneFeatureSolves(d: Dataset): { feature: string; score: number } | null {
  const train = trainRows(d.y.length);
  const valid = d.y.map((_, i) => i).filter((i) => !train[i]);
  if (valid.length === 0) return null;
  const trainY = d.y.filter((_, i) => train[i]);
  let base: number;
  if (d.kind === 'regression') base = trainY.reduce((a, b) => a + b, 0) / Math.max(1, trainY.length);
  else {
    const counts = new Array<number>(d.classes!.length).fill(0);
    for (const y of trainY) counts[y]++;
    base = counts.indexOf(Math.max(...counts));
  }
  for (let j = 0; j < d.features.length; j++) {
    const { bin, count } = bins(d, j, train);
    const rule = fit(d, bin, count, train, base);
    const s = score(d, (i) => rule[bin[i]], valid, base);
    if (s >= SOLVED_SCORE) return { feature: d.features[j], score: s };
  }
  return null;
}

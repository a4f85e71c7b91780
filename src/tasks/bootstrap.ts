/**
 * The standard error of a hidden score by the bootstrap: the held-out units (episodes or test
 * rows) are resampled with replacement `resamples` times, the metric is recomputed on each
 * resample, and the standard deviation of those values is the standard error. The resampling
 * is seeded from a fixed constant, so the same evaluation always reports the same error.
 */
import { Rng } from '../util/rng.js';

/** Resamples used for every hidden score's standard error. */
export const BOOTSTRAP_RESAMPLES = 200;
const BOOTSTRAP_SEED = 0xb007;

/**
 * Bootstrap standard error of `statistic` over `n` units; `statistic` receives the indices of
 * one resample (length n). Null when there are fewer than two units.
 */
export function bootstrapStderr(n: number, statistic: (indices: Uint32Array) => number, resamples = BOOTSTRAP_RESAMPLES): number | null {
  if (n < 2) return null;
  const rng = new Rng(BOOTSTRAP_SEED);
  const idx = new Uint32Array(n);
  let sum = 0;
  let sumSq = 0;
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) idx[i] = rng.int(n);
    const v = statistic(idx);
    sum += v;
    sumSq += v * v;
  }
  const mean = sum / resamples;
  return Math.sqrt(Math.max(0, sumSq / resamples - mean * mean) * (resamples / (resamples - 1)));
}

/** Bootstrap standard error of the mean of `values` (per-episode returns, per-row correctness). */
export function meanStderr(values: ArrayLike<number>, resamples = BOOTSTRAP_RESAMPLES): number | null {
  return bootstrapStderr(
    values.length,
    (idx) => {
      let s = 0;
      for (const i of idx) s += values[i];
      return s / idx.length;
    },
    resamples,
  );
}

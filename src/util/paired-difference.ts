/**
 * The mean of paired differences with its Student-t interval: how far one method is from another
 * on the same tasks, and whether the tasks' spread lets that difference be told from zero.
 */
import jstat from 'jstat'; // a CommonJS module: its default export holds jStat

/** The paired difference a − b over the pairs where both have a value. */
export interface PairedDifference {
  /** Pairs with both values. */
  n: number;
  mean: number;
  /** The two-sided interval's bounds at the level asked for (null with fewer than 2 pairs, where no spread is known). */
  lo: number | null;
  hi: number | null;
}

/** Where a paired difference's interval lies: wholly above 0, wholly below it, or across it (level within the noise). */
export type PairedVerdict = 'above' | 'level' | 'below';

/**
 * The mean of a[i] − b[i] over the indices where both are numbers, with its two-sided Student-t
 * interval at `level` (0.9: each side is a one-sided 95% bound); null when no pair has both.
 */
export function pairedDifference(a: (number | null)[], b: (number | null)[], level = 0.9): PairedDifference | null {
  if (a.length !== b.length) throw new Error(`pairedDifference: series of lengths ${a.length} and ${b.length}`);
  if (!(level > 0 && level < 1)) throw new RangeError(`pairedDifference: level must lie in (0, 1), got ${level}`);
  const d: number[] = [];
  a.forEach((x, i) => {
    const y = b[i];
    if (x !== null && y !== null && Number.isFinite(x) && Number.isFinite(y)) d.push(x - y);
  });
  const n = d.length;
  if (n === 0) return null;
  const mean = jstat.jStat.mean(d);
  if (n < 2) return { n, mean, lo: null, hi: null };
  const sd = jstat.jStat.stdev(d, true); // over n − 1
  const half = jstat.jStat.studentt.inv(1 - (1 - level) / 2, n - 1) * (sd / Math.sqrt(n));
  return { n, mean, lo: mean - half, hi: mean + half };
}

/** 'above' when the interval lies above 0, 'below' when below it, else 'level'; null without an interval. */
export function pairedVerdict(p: PairedDifference | null): PairedVerdict | null {
  if (!p || p.lo === null || p.hi === null) return null;
  return p.lo > 0 ? 'above' : p.hi < 0 ? 'below' : 'level';
}

/** Rank correlation, for comparing how two fidelities order the same jobs. */
import jstat from 'jstat'; // a CommonJS module: its default export holds jStat

/** Ranks from 1 in ascending order, ties sharing their mean rank. */
export function ranks(xs: number[]): number[] {
  const order = xs.map((v, i) => ({ v, i })).sort((a, b) => a.v - b.v);
  const out = new Array<number>(xs.length);
  for (let lo = 0; lo < order.length; ) {
    let hi = lo;
    while (hi + 1 < order.length && order[hi + 1].v === order[lo].v) hi++;
    for (let k = lo; k <= hi; k++) out[order[k].i] = (lo + hi) / 2 + 1;
    lo = hi + 1;
  }
  return out;
}

/** Spearman's rank correlation of two equally long series; null when either is constant or shorter than 2. */
export function spearman(a: number[], b: number[]): number | null {
  if (a.length !== b.length) throw new Error(`spearman: series of lengths ${a.length} and ${b.length}`);
  const ra = ranks(a);
  const rb = ranks(b);
  const constant = (r: number[]): boolean => r.every((v) => v === r[0]);
  return a.length < 2 || constant(ra) || constant(rb) ? null : jstat.jStat.corrcoeff(ra, rb);
}

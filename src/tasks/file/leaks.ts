/** Features of a task file's table that copy its target: refused when the file loads (load.ts). */
import type { Dataset } from '../../spec/data.js';

/** |correlation| of a feature with a regression target at or above which it is a copy of the target. */
export const LEAK_CORRELATION = 0.999;

/** Pearson's correlation of two equally long columns over the rows where both have a value (0 when either is constant). */
function pearson(aAll: number[], bAll: number[]): number {
  const both = aAll.map((_, i) => i).filter((i) => !Number.isNaN(aAll[i]) && !Number.isNaN(bAll[i]));
  const a = both.map((i) => aAll[i]);
  const b = both.map((i) => bAll[i]);
  const n = a.length;
  const ma = a.reduce((s, v) => s + v, 0) / n;
  const mb = b.reduce((s, v) => s + v, 0) / n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) ** 2;
    sbb += (b[i] - mb) ** 2;
  }
  return saa === 0 || sbb === 0 ? 0 : sab / Math.sqrt(saa * sbb);
}

/**
 * Features that copy the target: for regression, a correlation of magnitude at least
 * `LEAK_CORRELATION` (the same column, a change of units); for classification, a column whose
 * value decides the class on every row while it takes few values (at most a fifth as many as
 * there are rows) — a code or a renamed copy of the label.
 */
export function leakProblems(d: Dataset, columns: string[]): string[] {
  const problems: string[] = [];
  d.features.forEach((_, j) => {
    const col = d.x.map((r) => r[j]);
    const at = `data.features[${j}]`;
    if (d.kind === 'regression') {
      // A categorical column's codes say nothing by their order: a copy of a numeric target is numeric.
      if (d.columns?.[j]?.kind === 'categorical') return;
      const r = pearson(col, d.y);
      if (Math.abs(r) >= LEAK_CORRELATION)
        problems.push(`${at}: column "${columns[j]}" is a copy of the target (correlation ${r.toFixed(4)} with "${d.target}"); leave it out`);
      return;
    }
    const decides = new Map<number, number>();
    let determined = true;
    for (let i = 0; i < col.length && determined; i++) {
      const seen = decides.get(col[i]);
      if (seen === undefined) decides.set(col[i], d.y[i]);
      else if (seen !== d.y[i]) determined = false;
    }
    if (determined && decides.size <= col.length / 5) {
      problems.push(
        `${at}: column "${columns[j]}" decides the target "${d.target}" on every row ` +
          `(${decides.size} values, each with one class): it leaks the answer; leave it out`,
      );
    }
  });
  return problems;
}

/** Features of a task file's table that copy its target: refused when the file loads (load.ts). */
import type { Dataset } from '../../spec/data.js';
import { correlation } from '../../inner/data/stats.js';

/** |correlation| of a feature with a regression target at or above which it is a copy of the target. */
export const LEAK_CORRELATION = 0.999;

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
      const r = correlation(col, d.y);
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

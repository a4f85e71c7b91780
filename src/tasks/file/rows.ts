/**
 * The rows of a task file's data table: numeric features and a target (a number or a class label)
 * per row, cells that mean "no value" recognised, and every problem of the table named by its
 * field, row and column.
 */
import type { SupervisedTaskFile } from './schema.js';
import type { Table } from './table.js';

/** Where the problems found go, one line each. */
export interface ProblemList {
  add(line: string): void;
}

/** Cells that mean "no value". */
const MISSING = new Set(['', 'na', 'nan', 'null', 'none', 'n/a', '?']);

/** A cell as a number: a finite number, `missing`, or `bad` (text that is not a number). */
function numberOf(cell: unknown): number | 'missing' | 'bad' {
  if (cell === null || cell === undefined) return 'missing';
  if (typeof cell === 'number') return Number.isFinite(cell) ? cell : 'missing';
  if (typeof cell === 'boolean') return cell ? 1 : 0;
  if (typeof cell === 'string') {
    const t = cell.trim();
    if (MISSING.has(t.toLowerCase())) return 'missing';
    const n = Number(t);
    return Number.isFinite(n) ? n : 'bad';
  }
  return 'bad';
}

/** A target cell as a class label, or missing. */
function labelOf(cell: unknown): string | 'missing' | 'bad' {
  if (cell === null || cell === undefined) return 'missing';
  if (typeof cell === 'number') return Number.isFinite(cell) ? String(cell) : 'missing';
  if (typeof cell === 'boolean') return String(cell);
  if (typeof cell === 'string') return MISSING.has(cell.trim().toLowerCase()) ? 'missing' : cell.trim();
  return 'bad';
}

const quote = (v: unknown): string => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 37)}...` : s);
};

/** Rows of numeric features and a target read from a table (classes given: labels must be among them). */
export interface Rows {
  x: number[][];
  labels: (string | number)[];
  dropped: number;
}

/** The rows of a table: numeric features and a target; problems added, null when a used column is missing. */
export function tableRows(table: Table, spec: SupervisedTaskFile['data'], name: string, field: string, p: ProblemList): Rows | null {
  const missingCols = [spec.target, ...spec.features].filter((c) => !table.columns.includes(c));
  for (const c of missingCols) {
    const at = c === spec.target ? `${field}target` : `${field}features[${spec.features.indexOf(c)}]`;
    p.add(`${at}: column "${c}" is not in ${name} (columns: ${table.columns.slice(0, 30).join(', ')}${table.columns.length > 30 ? ', ...' : ''})`);
  }
  // With columns missing, the others are still checked (every problem in one pass), then null.
  const features = spec.features.filter((c) => table.columns.includes(c));
  const hasTarget = table.columns.includes(spec.target);
  const x: number[][] = [];
  const labels: (string | number)[] = [];
  let dropped = 0;
  const badFeature = new Map<string, string>();
  let badTarget: string | null = null;
  let firstMissing: string | null = null;
  table.rows.forEach((row, r) => {
    const line = r + 1;
    const feats: number[] = [];
    let missing = false;
    for (const c of features) {
      const v = numberOf(row[c]);
      if (v === 'bad') {
        if (!badFeature.has(c)) badFeature.set(c, `row ${line}: ${quote(row[c])}`);
        missing = true;
      } else if (v === 'missing') {
        missing = true;
        firstMissing ??= `row ${line}, column "${c}"`;
      } else feats.push(v);
    }
    let label: string | number = NaN;
    if (!hasTarget) missing = true;
    else if (spec.type === 'classification') {
      const l = labelOf(row[spec.target]);
      if (l === 'bad') badTarget ??= `row ${line}: ${quote(row[spec.target])}`;
      if (l === 'missing') firstMissing ??= `row ${line}, column "${spec.target}"`;
      if (l === 'bad' || l === 'missing') missing = true;
      label = l;
    } else {
      const v = numberOf(row[spec.target]);
      if (v === 'bad') badTarget ??= `row ${line}: ${quote(row[spec.target])}`;
      if (v === 'missing') firstMissing ??= `row ${line}, column "${spec.target}"`;
      if (v === 'bad' || v === 'missing') missing = true;
      label = typeof v === 'number' ? v : NaN;
    }
    if (missing) {
      dropped++;
      return;
    }
    x.push(feats);
    labels.push(label);
  });
  for (const [c, where] of badFeature) {
    p.add(`${field}features[${spec.features.indexOf(c)}]: column "${c}" is not numeric (${where}); encode it as numbers or leave it out`);
  }
  if (badTarget) {
    const want = spec.type === 'regression' ? 'numeric' : 'a class label';
    const hint = spec.type === 'regression' ? '; use type "classification" for labels' : '';
    p.add(`${field}target: column "${spec.target}" is not ${want} (${badTarget})${hint}`);
  }
  if (missingCols.length) return null;
  if (dropped > 0 && spec.missing === 'error' && firstMissing)
    p.add(`${field}missing: ${dropped} row(s) of ${name} have an empty value (first: ${firstMissing}); set "missing": "drop-row" to drop them`);
  return { x, labels, dropped };
}

/** Sorted class names: numerically when every label is a number, else as text. */
export function classList(labels: (string | number)[]): string[] {
  const distinct = [...new Set(labels.map(String))];
  return distinct.every((l) => l !== '' && Number.isFinite(Number(l))) ? distinct.sort((a, b) => Number(a) - Number(b)) : distinct.sort();
}

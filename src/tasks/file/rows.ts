/**
 * The rows of a task file's data table: features as they come (numbers, categories, missing
 * cells, coded as `Dataset.columns` says) and a target (a number or a class label) per row, cells
 * that mean "no value" recognised, and every problem of the table named by its field, row and column.
 */
import type { ColumnInfo } from '../../spec/data.js';
import type { SupervisedTaskFile } from './schema.js';
import type { Table } from './table.js';

/** Where the problems found go, one line each. */
export interface ProblemList {
  add(line: string): void;
}

/** Cells that mean "no value". */
const MISSING = new Set(['', 'na', 'nan', 'null', 'none', 'n/a', '?']);

/** A cell as a number: a finite number, `missing`, or `bad` (text that is not a number). */
export function numberOf(cell: unknown): number | 'missing' | 'bad' {
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

/** A cell as a label (a target's class, a categorical feature's level), or missing. */
export function labelOf(cell: unknown): string | 'missing' | 'bad' {
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

/** Rows read from a table: coded features (`Dataset.columns`), a target per row, and how the table was read. */
export interface Rows {
  x: number[][];
  labels: (string | number)[];
  /** Rows left out: an empty target, or (under `missing: drop-row`) an empty feature cell. */
  dropped: number;
  /** Each feature's coding; absent when every feature is numeric and no kept cell is missing. */
  columns?: ColumnInfo[];
  /** Facts worth telling the user: columns read as categorical, text cells read as missing. */
  notes: string[];
}

/** A column whose distinct texts number more than this share of its rows (and at least `ID_LEVELS`) is an identifier or free text. */
const ID_SHARE = 0.5;
const ID_LEVELS = 50;
/** A mostly numeric column: at least this share of its present cells are numbers; its few texts are read as missing. */
const NUMERIC_SHARE = 0.95;

/** What a column holds, as `rrl task new` weighs it: cells present, how they read, and whether it looks like an identifier. */
export interface ColumnFacts {
  rows: number;
  present: number;
  /** Read as numbers (a few texts among numbers are missing cells) or as categories. */
  kind: 'numeric' | 'categorical';
  /** Distinct values of a categorical column. */
  levels: number;
  /** A different text on most rows (free text or an id), or whole numbers that count the rows. */
  identifier: boolean;
}

/** The facts of one column's cells. */
export function columnFacts(values: unknown[]): ColumnFacts {
  const nums = values.map(numberOf);
  const present = nums.filter((v) => v !== 'missing').length;
  const texts = nums.filter((v) => v === 'bad').length;
  if (present > 0 && texts <= (1 - NUMERIC_SHARE) * present) {
    const got = nums.filter((v): v is number => typeof v === 'number');
    const distinct = new Set(got);
    const counts = got.length > 1 && distinct.size === got.length && got.every(Number.isInteger) && Math.max(...got) - Math.min(...got) === got.length - 1;
    return { rows: values.length, present, kind: 'numeric', levels: 0, identifier: counts };
  }
  const levels = new Set(values.map(labelOf).filter((l) => l !== 'missing' && l !== 'bad')).size;
  return { rows: values.length, present, kind: 'categorical', levels, identifier: levels >= ID_LEVELS && levels > ID_SHARE * present };
}

/** How one feature column is read: its coding and, for a categorical one, its cells' codes. */
interface ColumnRead {
  coding: ColumnInfo;
  cells: number[];
  note?: string;
  problem?: string;
}

/** Reads one feature column: numeric, mostly numeric (texts missing), or categorical (levels sorted); a problem for an unusable one. */
function readColumn(values: unknown[], column: string, forced: boolean, given: ColumnInfo | undefined): ColumnRead {
  const nums = values.map(numberOf);
  const present = nums.filter((v) => v !== 'missing').length;
  if (present === 0) return { coding: { kind: 'numeric' }, cells: [], problem: `column "${column}" has no value in any row; leave it out` };
  const texts = nums.filter((v) => v === 'bad').length;
  if (given?.kind === 'numeric' || (!given && !forced && texts <= (1 - NUMERIC_SHARE) * present)) {
    const cells = nums.map((v) => (typeof v === 'number' ? v : NaN));
    const note = texts ? `column "${column}": ${texts} text cell(s) among numbers read as missing` : undefined;
    return { coding: { kind: 'numeric' }, cells, note };
  }
  const labels = values.map(labelOf);
  const levels = given?.kind === 'categorical' ? given.levels : classList(labels.filter((l): l is string => l !== 'missing' && l !== 'bad'));
  const index = new Map(levels.map((l, i) => [l, i]));
  const cells = labels.map((l) => (l === 'missing' || l === 'bad' ? NaN : (index.get(l) ?? NaN)));
  if (!given && levels.length >= ID_LEVELS && levels.length > ID_SHARE * present) {
    return {
      coding: { kind: 'categorical', levels },
      cells,
      problem: `column "${column}" has ${levels.length} different texts in ${present} rows: an identifier or free text, not a feature; leave it out`,
    };
  }
  const unseen = given ? labels.filter((l) => l !== 'missing' && l !== 'bad' && !index.has(l)).length : 0;
  const note = given
    ? unseen
      ? `column "${column}": ${unseen} cell(s) with a level the main file does not have read as missing`
      : undefined
    : `column "${column}" read as categorical (${levels.length} levels)`;
  return { coding: { kind: 'categorical', levels }, cells, note };
}

/**
 * The rows of a table: coded features and a target; problems added, null when a used column is
 * missing. `codings` (an extra source's) reads each column as the main file's did.
 */
export function tableRows(table: Table, spec: SupervisedTaskFile['data'], name: string, field: string, p: ProblemList, codings?: ColumnInfo[]): Rows | null {
  const missingCols = [spec.target, ...spec.features].filter((c) => !table.columns.includes(c));
  for (const c of missingCols) {
    const at = c === spec.target ? `${field}target` : `${field}features[${spec.features.indexOf(c)}]`;
    p.add(`${at}: column "${c}" is not in ${name} (columns: ${table.columns.slice(0, 30).join(', ')}${table.columns.length > 30 ? ', ...' : ''})`);
  }
  // With columns missing, the others are still checked (every problem in one pass), then null.
  const notes: string[] = [];
  const reads = spec.features.map((c, j) => {
    if (!table.columns.includes(c)) return null;
    const read = readColumn(
      table.rows.map((row) => row[c]),
      c,
      spec.categorical.includes(c),
      codings?.[j],
    );
    if (read.problem && table.rows.length > 0) p.add(`${field}features[${j}]: ${read.problem}`);
    if (read.note) notes.push(read.note);
    return read;
  });
  const hasTarget = table.columns.includes(spec.target);
  const x: number[][] = [];
  const labels: (string | number)[] = [];
  let dropped = 0;
  let badTarget: string | null = null;
  let firstMissing: string | null = null;
  let anyMissing = false;
  table.rows.forEach((row, r) => {
    const line = r + 1;
    let label: string | number = NaN;
    let skip = !hasTarget;
    if (hasTarget) {
      const l = spec.type === 'classification' ? labelOf(row[spec.target]) : numberOf(row[spec.target]);
      if (l === 'bad') badTarget ??= `row ${line}: ${quote(row[spec.target])}`;
      if (l === 'missing') firstMissing ??= `row ${line}, column "${spec.target}"`;
      if (l === 'bad' || l === 'missing') skip = true;
      else label = l;
    }
    const feats = reads.map((read) => (read ? (read.cells[r] ?? NaN) : NaN));
    const gap = feats.findIndex((v) => Number.isNaN(v));
    if (gap >= 0) firstMissing ??= `row ${line}, column "${spec.features[gap]}"`;
    if (gap >= 0 && spec.missing !== 'keep') skip = true;
    if (skip) {
      dropped++;
      return;
    }
    anyMissing ||= gap >= 0;
    x.push(feats);
    labels.push(label);
  });
  if (badTarget) {
    const want = spec.type === 'regression' ? 'numeric' : 'a class label';
    const hint = spec.type === 'regression' ? '; use type "classification" for labels' : '';
    p.add(`${field}target: column "${spec.target}" is not ${want} (${badTarget})${hint}`);
  }
  if (missingCols.length) return null;
  if (dropped > 0 && spec.missing === 'error' && firstMissing)
    p.add(`${field}missing: ${dropped} row(s) of ${name} have an empty value (first: ${firstMissing}); set "missing" to "keep" or "drop-row"`);
  const coded = reads.map((r) => r!.coding);
  const columns = anyMissing || coded.some((c) => c.kind === 'categorical') ? coded : undefined;
  return { x, labels, dropped, notes, ...(columns ? { columns } : {}) };
}

/** Sorted class names: numerically when every label is a number, else as text. */
export function classList(labels: (string | number)[]): string[] {
  const distinct = [...new Set(labels.map(String))];
  return distinct.every((l) => l !== '' && Number.isFinite(Number(l))) ? distinct.sort((a, b) => Number(a) - Number(b)) : distinct.sort();
}

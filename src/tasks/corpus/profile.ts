/**
 * A raw column's profile: how many cells are present, its distinct values, whether it reads as
 * numbers, integers, a row id. The target rule and the feature rules read these, not the cells.
 */
import type { Cell, ColumnKind, RawColumn } from './read.js';

/** What the rules need to know of a column. */
export interface ColumnProfile {
  name: string;
  kind: ColumnKind;
  rows: number;
  present: number;
  /** Distinct present values (as strings), counted. */
  distinct: number;
  /** Numeric kind and every present cell a number. */
  numeric: boolean;
  /** Every present cell an integer. */
  integer: boolean;
  /** Unique per row and a running number or a name that says id: a row id, never a feature or a target. */
  idLike: boolean;
}

/** Names of columns that number or date rows rather than measure them. */
const ID_NAMES = /^(rownames|id|.*[._]id|id[._].*|obs|index|case|caseid|row)$/i;
/** Names of columns that say when rather than what: never a target picked without the documentation. */
export const TIME_NAMES = /^(year|yr|years|date|time|month|day|week|quarter|period|t)$/i;

/** Whether a cell is present. */
export const present = (c: Cell): boolean => c !== null && !(typeof c === 'number' && Number.isNaN(c));

/** The profile of a raw column. */
export function profile(col: RawColumn): ColumnProfile {
  const seen = new Set<string | number>();
  let n = 0;
  let numeric = col.kind === 'numeric';
  let integer = true;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const c of col.cells) {
    if (!present(c)) continue;
    n++;
    seen.add(typeof c === 'number' ? c : `s:${c}`);
    if (typeof c !== 'number') numeric = false;
    else {
      if (!Number.isInteger(c)) integer = false;
      min = Math.min(min, c);
      max = Math.max(max, c);
    }
  }
  const unique = n > 0 && seen.size === n && n >= 0.95 * col.cells.length;
  const running = numeric && integer && max - min + 1 <= 1.5 * n;
  // Text unique per row is free text, told apart by its reason; a factor with a level per row names the rows.
  const stringy = col.kind === 'categorical';
  const idLike = col.name === 'rownames' || (unique && (running || stringy || ID_NAMES.test(col.name))) || (ID_NAMES.test(col.name) && seen.size > n / 2);
  return { name: col.name, kind: col.kind, rows: col.cells.length, present: n, distinct: seen.size, numeric, integer: numeric && integer, idLike };
}

/** Whether a string column is free text rather than a factor: a level for most rows, or very many levels. */
export function freeText(p: ColumnProfile): boolean {
  return !p.numeric && (p.distinct > 50 || p.distinct > p.present / 2);
}

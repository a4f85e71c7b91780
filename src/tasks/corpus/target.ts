/**
 * The target rule (docs/corpus.md, "Tasks from the corpus"): the response the documentation
 * names; else a factor with 2–20 levels; else a numeric column with at least 10 distinct values;
 * else a numeric column of 2–9 values. At most two targets per table: the first candidate, then
 * the first of the other kind (a classification next to a regression) or else the next one; a
 * candidate a filter drops gives way to the next.
 */
import type { TableDoc } from './doc.js';
import { type ColumnProfile, TIME_NAMES, freeText } from './profile.js';

/** One target a table's task predicts. */
export interface TargetChoice {
  column: string;
  kind: 'classification' | 'regression';
  /** Why this column: the documentation names it, or the rule's fallback. */
  why: 'named' | 'factor' | 'numeric';
}

/** Most targets (tasks) made of one table. */
export const MAX_TARGETS = 2;
/** Most classes of a classification target. */
export const MAX_CLASSES = 20;
/** Fewest distinct values of a regression target. */
export const MIN_REGRESSION_VALUES = 10;

/** How a column could be a target, or null when it cannot: a row id, free text, mostly missing, constant. */
export function targetKind(p: ColumnProfile): TargetChoice['kind'] | null {
  if (p.idLike || p.kind === 'datetime' || p.present < 0.5 * p.rows || p.distinct < 2) return null;
  if (p.kind === 'categorical' || p.kind === 'boolean' || p.kind === 'text') return !freeText(p) && p.distinct <= MAX_CLASSES ? 'classification' : null;
  if (!p.numeric) return null;
  if (p.distinct >= MIN_REGRESSION_VALUES && !(p.integer && p.distinct <= MAX_CLASSES)) return 'regression';
  return p.distinct <= MAX_CLASSES ? 'classification' : 'regression';
}

/** The candidates in the rule's order: named responses, factors, numeric columns, numeric columns of few values. */
export function targetCandidates(profiles: ColumnProfile[], doc: TableDoc): TargetChoice[] {
  const byName = new Map(profiles.map((p) => [p.name, p]));
  const out: TargetChoice[] = [];
  const add = (p: ColumnProfile | undefined, why: TargetChoice['why'], want?: (k: TargetChoice['kind'], p: ColumnProfile) => boolean): void => {
    if (!p || out.some((c) => c.column === p.name)) return;
    const kind = targetKind(p);
    if (kind && (!want || want(kind, p))) out.push({ column: p.name, kind, why });
  };
  for (const name of doc.responses) add(byName.get(name), 'named');
  // Without the documentation's word a column that says when (year, month) is no target.
  const plain = profiles.filter((p) => !TIME_NAMES.test(p.name));
  for (const p of plain) add(p, 'factor', (k, q) => k === 'classification' && !q.numeric);
  for (const p of plain) add(p, 'numeric', (k) => k === 'regression');
  for (const p of plain) add(p, 'numeric', (k, q) => k === 'classification' && q.numeric);
  return out;
}

/** Most candidates tried per table: a candidate a filter drops gives way to the next, up to this many. */
export const MAX_TRIED = 4;

/**
 * The order a table's candidates are tried in until `MAX_TARGETS` tasks are made: the first, then
 * the first of the other kind, then the rest in the rule's order; at most `MAX_TRIED`.
 */
export function targetOrder(candidates: TargetChoice[]): TargetChoice[] {
  if (candidates.length === 0) return [];
  const first = candidates[0];
  const other = candidates.find((c) => c.kind !== first.kind);
  const order = [first, ...(other ? [other] : []), ...candidates.filter((c) => c !== first && c !== other)];
  return order.slice(0, MAX_TRIED);
}

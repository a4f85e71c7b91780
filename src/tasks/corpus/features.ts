/**
 * The feature columns of one task: every column but the target, less row ids, dates, free text,
 * constant columns, columns at least 95 % missing and near-copies of the target (a column that
 * correlates |r| ≥ 0.98 with a numeric target, or whose values determine the target: a recoding of
 * it). Each excluded column comes back with its reason. Columns with missing cells are kept: the
 * job decides what to do with them.
 */
import type { Cell, RawColumn, RawTable } from './read.js';
import { type ColumnProfile, freeText, present } from './profile.js';
import { correlation } from '../../inner/data/stats.js';

/** Why a column is not a feature. */
export type ExclusionReason = 'row id' | 'date or time' | 'free text' | 'constant' | 'mostly missing' | 'near-copy of the target';

/** A column kept as a feature. */
export interface FeatureColumn {
  column: RawColumn;
  kind: 'numeric' | 'categorical';
}

/** The share of missing cells past which a column is dropped. */
export const MAX_MISSING = 0.95;
/** |r| with a numeric target from which a numeric column is a near-copy. */
export const COPY_CORRELATION = 0.98;

/** Whether the values of `a` determine those of `b` (each value of `a` seen with one value of `b`), over rows where both are present. */
function determines(a: Cell[], b: Cell[]): boolean {
  const seen = new Map<string, string>();
  for (let i = 0; i < a.length; i++) {
    if (!present(a[i]) || !present(b[i])) continue;
    const k = String(a[i]);
    const v = String(b[i]);
    const known = seen.get(k);
    if (known === undefined) seen.set(k, v);
    else if (known !== v) return false;
  }
  return seen.size > 0;
}

/**
 * Whether `col` nearly copies the target: |r| ≥ 0.98 with a numeric target; or, with few enough
 * values that determining is not chance (at most half the rows), its values determine a class
 * target or map one to one onto a regression target's.
 */
export function copiesTarget(col: RawColumn, p: ColumnProfile, target: RawColumn, kind: 'classification' | 'regression'): boolean {
  if (kind === 'regression' && p.numeric && Math.abs(correlation(col.cells, target.cells)) >= COPY_CORRELATION) return true;
  if (p.distinct > p.present / 2) return false;
  if (!determines(col.cells, target.cells)) return false;
  return kind === 'classification' || determines(target.cells, col.cells);
}

/** Why a column is not a feature of a task with this target, or null when it is one. */
export function exclusion(col: RawColumn, p: ColumnProfile, target: RawColumn, kind: 'classification' | 'regression'): ExclusionReason | null {
  if (p.idLike) return 'row id';
  if (p.kind === 'datetime') return 'date or time';
  if (freeText(p)) return 'free text';
  if (p.present < (1 - MAX_MISSING) * p.rows) return 'mostly missing';
  if (p.distinct < 2) return 'constant';
  return copiesTarget(col, p, target, kind) ? 'near-copy of the target' : null;
}

/** The features of a task on `target`, and every other column with why it is left out. */
export function chooseFeatures(
  table: RawTable,
  profiles: ColumnProfile[],
  target: string,
  kind: 'classification' | 'regression',
): { features: FeatureColumn[]; excluded: { column: string; reason: ExclusionReason }[] } {
  const t = table.columns.find((c) => c.name === target);
  if (!t) throw new Error(`${table.package}::${table.item}: no column "${target}"`);
  const features: FeatureColumn[] = [];
  const excluded: { column: string; reason: ExclusionReason }[] = [];
  table.columns.forEach((col, j) => {
    if (col.name === target) return;
    const reason = exclusion(col, profiles[j], t, kind);
    if (reason) excluded.push({ column: col.name, reason });
    else features.push({ column: col, kind: profiles[j].numeric ? 'numeric' : 'categorical' });
  });
  return { features, excluded };
}

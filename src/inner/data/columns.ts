/**
 * Real columns as they come: numeric columns with missing cells and categorical columns, turned
 * into the numeric matrix the engine trains on by the job's dataset decisions (how categories are
 * encoded, how missing cells are handled). `fitColumns` learns the state from the training rows
 * (levels, fill values, standardisation, target means) and `applyColumns` is the one function that
 * turns rows into features with it, for training and for the scorer alike; the state is plain JSON
 * and is saved in the artifact.
 *
 * Target encoding is fitted out of fold: a training row's own target never enters its encoding.
 */
import type { ColumnInfo } from '../../spec/data.js';
import type { ColumnDecisions } from '../../spec/schema.js';
import { z } from 'zod';
import { ColumnDecisionsSection } from '../../spec/schema.js';
import { Rng } from '../../util/rng.js';

/** A raw column: numbers with NaN for a missing cell, or category levels with null for a missing cell. */
export type RawColumn =
  | { name: string; kind: 'numeric'; values: readonly number[] }
  | { name: string; kind: 'categorical'; values: readonly (string | null)[] };

/** How the job turns raw columns into features: the job spec's `dataset.columns`. */
export type { ColumnDecisions } from '../../spec/schema.js';
/** The sensible defaults a practitioner starts from. */
export { DEFAULT_COLUMN_DECISIONS } from '../../spec/schema.js';

/** What the training target is, for target encoding: class indices (with the class count) or values. */
export type FitTarget = { kind: 'classification'; y: readonly number[]; classes: number } | { kind: 'regression'; y: readonly number[] };

/** The fitted state of one column. */
export type FittedColumn =
  | { name: string; kind: 'numeric'; fill: number; center: number; scale: number; indicator: boolean }
  | { name: string; kind: 'one-hot'; levels: string[]; other: boolean; indicator: boolean }
  | { name: string; kind: 'frequency'; shares: Record<string, number>; center: number; scale: number; indicator: boolean }
  | { name: string; kind: 'target'; means: Record<string, number[]>; prior: number[]; indicator: boolean };

/** Everything `applyColumns` needs: the fitted columns and the feature names they give, in order. */
export interface FittedColumns {
  decisions: ColumnDecisions;
  columns: FittedColumn[];
  features: string[];
}

/** The fit: its state, the training matrix (target encoding out of fold) and the training rows kept. */
export interface ColumnFit {
  state: FittedColumns;
  x: number[][];
  kept: number[];
}

/** A missing categorical cell is a level of its own unless rows with one are dropped. */
const MISSING_LEVEL = '(missing)';
/** Folds of the out-of-fold target encoding. */
const FOLDS = 5;
/** Weight of the prior in a level's target mean (additive smoothing, in rows). */
const SMOOTHING = 10;

const isMissing = (c: RawColumn, i: number): boolean => (c.kind === 'numeric' ? Number.isNaN(c.values[i]) : c.values[i] === null);

/** Fits the state on the training rows and returns it with the training matrix. Throws on columns of unequal length. */
export function fitColumns(columns: readonly RawColumn[], target: FitTarget, decisions: ColumnDecisions, seed: number): ColumnFit {
  const n = target.y.length;
  for (const c of columns) if (c.values.length !== n) throw new RangeError(`column "${c.name}" has ${c.values.length} rows, the target ${n}`);
  const kept = keptRows(columns, n, decisions);
  const pick = <T>(v: readonly T[]): T[] => kept.map((i) => v[i]);
  const keptTarget: FitTarget = { ...target, y: pick(target.y) };
  const fitted = columns.map((c) => {
    const hadMissing = c.values.some((_, i) => isMissing(c, i));
    const indicator = decisions.indicator && hadMissing && decisions.missing !== 'drop-row';
    return c.kind === 'numeric'
      ? fitNumeric(c.name, pick(c.values), decisions, indicator)
      : fitCategorical(c.name, pick(c.values), keptTarget, decisions, indicator);
  });
  const state: FittedColumns = { decisions: { ...decisions }, columns: fitted, features: fitted.flatMap(featureNames) };
  const rows = columns.map((c) => ({ ...c, values: pick(c.values as readonly unknown[]) }) as RawColumn);
  const x = applyColumns(state, rows);
  overwriteOutOfFold(state, rows, keptTarget, x, seed);
  return { state, x, kept };
}

/** The features of rows given as raw columns, by the fitted state: the one function training and scoring share. */
export function applyColumns(state: FittedColumns, columns: readonly RawColumn[]): number[][] {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const n = columns[0]?.values.length ?? 0;
  const x: number[][] = Array.from({ length: n }, () => []);
  for (const f of state.columns) {
    const c = byName.get(f.name);
    if (!c) throw new RangeError(`the rows have no column "${f.name}"`);
    for (let i = 0; i < n; i++) x[i].push(...encodeCell(f, c, i));
  }
  return x;
}

/** The rows training keeps: all, or under `drop-row` those without a missing cell. */
function keptRows(columns: readonly RawColumn[], n: number, decisions: ColumnDecisions): number[] {
  const all = Array.from({ length: n }, (_, i) => i);
  return decisions.missing === 'drop-row' ? all.filter((i) => !columns.some((c) => isMissing(c, i))) : all;
}

function fitNumeric(name: string, values: readonly number[], d: ColumnDecisions, indicator: boolean): FittedColumn {
  const present = values.filter((v) => !Number.isNaN(v));
  const mean = present.length ? present.reduce((a, b) => a + b, 0) / present.length : 0;
  const fill = d.missing === 'median' ? median(present) : d.missing === 'constant' ? 0 : mean;
  const filled = values.map((v) => (Number.isNaN(v) ? fill : v));
  const { center, scale } = standardisation(filled);
  return { name, kind: 'numeric', fill, center, scale, indicator };
}

function fitCategorical(name: string, values: readonly (string | null)[], target: FitTarget, d: ColumnDecisions, indicator: boolean): FittedColumn {
  const levels = values.map((v) => v ?? MISSING_LEVEL);
  const counts = new Map<string, number>();
  for (const l of levels) counts.set(l, (counts.get(l) ?? 0) + 1);
  if (d.categorical === 'one-hot') {
    // Most frequent first, ties by name: the same rows always give the same features.
    const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([l]) => l);
    const other = ranked.length > d.maxLevels;
    return { name, kind: 'one-hot', levels: ranked.slice(0, other ? d.maxLevels - 1 : d.maxLevels), other, indicator };
  }
  if (d.categorical === 'frequency') {
    const shares = Object.fromEntries([...counts.entries()].map(([l, k]) => [l, k / Math.max(1, levels.length)]));
    const { center, scale } = standardisation(levels.map((l) => shares[l]));
    return { name, kind: 'frequency', shares, center, scale, indicator };
  }
  const prior = targetMean(
    target,
    levels.map((_, i) => i),
  );
  const rowsOf = new Map<string, number[]>();
  levels.forEach((l, i) => {
    const list = rowsOf.get(l);
    if (list) list.push(i);
    else rowsOf.set(l, [i]);
  });
  const means = Object.fromEntries([...rowsOf.entries()].map(([l, rows]) => [l, smoothed(targetMean(target, rows), rows.length, prior)]));
  return { name, kind: 'target', means, prior, indicator };
}

/** Replaces each target-encoded column of the training matrix by means fitted on the other folds. */
function overwriteOutOfFold(state: FittedColumns, rows: readonly RawColumn[], target: FitTarget, x: number[][], seed: number): void {
  const n = target.y.length;
  const fold = new Array<number>(n);
  new Rng(seed).permutation(n).forEach((row, k) => {
    fold[row] = k % FOLDS;
  });
  let offset = 0;
  for (const f of state.columns) {
    const c = rows.find((r) => r.name === f.name);
    if (f.kind === 'target' && c?.kind === 'categorical') {
      const levels = c.values.map((v) => v ?? MISSING_LEVEL);
      for (let k = 0; k < FOLDS; k++) {
        const others = new Map<string, number[]>();
        const all: number[] = [];
        levels.forEach((l, i) => {
          if (fold[i] === k) return;
          all.push(i);
          const list = others.get(l);
          if (list) list.push(i);
          else others.set(l, [i]);
        });
        const prior = targetMean(target, all);
        const means = new Map([...others.entries()].map(([l, same]) => [l, smoothed(targetMean(target, same), same.length, prior)]));
        for (let i = 0; i < n; i++) {
          if (fold[i] !== k) continue;
          const m = means.get(levels[i]) ?? prior;
          for (let j = 0; j < m.length; j++) x[i][offset + j] = m[j];
        }
      }
    }
    offset += featureNames(f).length;
  }
}

/** The features one fitted column gives, by name. */
function featureNames(f: FittedColumn): string[] {
  const base =
    f.kind === 'one-hot'
      ? [...f.levels.map((l) => `${f.name}=${l}`), ...(f.other ? [`${f.name}=(other)`] : [])]
      : f.kind === 'target'
        ? f.prior.map((_, j) => (f.prior.length > 1 ? `${f.name}:mean${j}` : `${f.name}:mean`))
        : [f.name];
  return f.indicator ? [...base, `${f.name}:missing`] : base;
}

/** One cell's features under its fitted column. */
function encodeCell(f: FittedColumn, c: RawColumn, i: number): number[] {
  const missing = isMissing(c, i);
  const flag = f.indicator ? [missing ? 1 : 0] : [];
  if (f.kind === 'numeric') {
    const v = missing || c.kind !== 'numeric' ? f.fill : (c.values[i] as number);
    return [(v - f.center) / f.scale, ...flag];
  }
  const level = missing ? MISSING_LEVEL : String(c.values[i]);
  if (f.kind === 'one-hot') {
    const at = f.levels.indexOf(level);
    const hot = f.levels.map((_, j) => (j === at ? 1 : 0));
    return [...hot, ...(f.other ? [at < 0 ? 1 : 0] : []), ...flag];
  }
  if (f.kind === 'frequency') return [((f.shares[level] ?? 0) - f.center) / f.scale, ...flag];
  return [...(Object.hasOwn(f.means, level) ? f.means[level] : f.prior), ...flag];
}

/** The mean target of the rows: per class shares for classification, the mean value for regression. */
function targetMean(target: FitTarget, rows: readonly number[]): number[] {
  if (target.kind === 'regression') return [rows.length ? rows.reduce((a, i) => a + target.y[i], 0) / rows.length : 0];
  const shares = new Array<number>(target.classes).fill(0);
  for (const i of rows) shares[target.y[i]] += 1 / rows.length;
  return shares;
}

/** A level's mean pulled toward the prior by `SMOOTHING` rows: a rare level says little. */
function smoothed(m: readonly number[], rows: number, prior: readonly number[]): number[] {
  return m.map((v, j) => (rows * (rows ? v : 0) + SMOOTHING * prior[j]) / (rows + SMOOTHING));
}

function median(v: readonly number[]): number {
  if (!v.length) return 0;
  const s = [...v].sort((a, b) => a - b);
  const h = (s.length - 1) / 2;
  return (s[Math.floor(h)] + s[Math.ceil(h)]) / 2;
}

/** Centre and scale for standardising; a constant column keeps scale 1. */
function standardisation(v: readonly number[]): { center: number; scale: number } {
  if (!v.length) return { center: 0, scale: 1 };
  const center = v.reduce((a, b) => a + b, 0) / v.length;
  const sd = Math.sqrt(v.reduce((a, b) => a + (b - center) ** 2, 0) / v.length);
  return { center, scale: sd > 1e-12 ? sd : 1 };
}

/** How a model reads a table's rows: the columns' names and codings, and the state fitted on its training rows. */
export interface ColumnEncoding {
  /** The table's feature names, in the order of a row's cells. */
  names: string[];
  /** Each feature's coding (`Dataset.columns`). */
  codings: ColumnInfo[];
  fitted: FittedColumns;
}

/**
 * Rows coded as `Dataset.columns` says (numbers, level indices; NaN or null where missing) as raw
 * columns; a code that names no level is missing.
 */
export function rawColumns(x: readonly (readonly (number | null)[])[], names: readonly string[], codings: readonly ColumnInfo[]): RawColumn[] {
  return names.map((name, j): RawColumn => {
    const c = codings[j];
    if (c.kind === 'numeric') return { name, kind: 'numeric', values: x.map((row) => (typeof row[j] === 'number' ? (row[j] as number) : NaN)) };
    return {
      name,
      kind: 'categorical',
      values: x.map((row) => {
        const code = row[j];
        return typeof code === 'number' && Number.isInteger(code) && code >= 0 && code < c.levels.length ? c.levels[code] : null;
      }),
    };
  });
}

/** The network's inputs of coded rows: the one function the trainer and the scorer both turn rows into inputs with. */
export function encodeRows(encoding: ColumnEncoding, x: readonly (readonly (number | null)[])[]): number[][] {
  x.forEach((row, r) => {
    if (row.length !== encoding.names.length) throw new RangeError(`row ${r} has ${row.length} cells, the model reads ${encoding.names.length} columns`);
  });
  return applyColumns(encoding.fitted, rawColumns(x, encoding.names, encoding.codings));
}

const finite = z.number().finite();
const name = z.string().max(1000);
const levelMap = <T extends z.ZodType>(v: T) => z.record(z.string().max(1000), v);
const FittedColumnSchema = z.discriminatedUnion('kind', [
  z.strictObject({ name, kind: z.literal('numeric'), fill: finite, center: finite, scale: finite.positive(), indicator: z.boolean() }),
  z.strictObject({ name, kind: z.literal('one-hot'), levels: z.array(z.string().max(1000)).max(64), other: z.boolean(), indicator: z.boolean() }),
  z.strictObject({ name, kind: z.literal('frequency'), shares: levelMap(finite), center: finite, scale: finite.positive(), indicator: z.boolean() }),
  z.strictObject({ name, kind: z.literal('target'), means: levelMap(z.array(finite).max(1000)), prior: z.array(finite).max(1000), indicator: z.boolean() }),
]);

/** The shape of a model file's `columns`, checked before a scorer trusts it (the file is the job's). */
export const ColumnEncodingSchema = z.strictObject({
  names: z.array(name).max(2000),
  codings: z
    .array(z.union([z.strictObject({ kind: z.literal('numeric') }), z.strictObject({ kind: z.literal('categorical'), levels: z.array(z.string().max(1000)) })]))
    .max(2000),
  fitted: z.strictObject({
    decisions: ColumnDecisionsSection,
    columns: z.array(FittedColumnSchema).max(2000),
    features: z.array(z.string().max(2100)).max(200_000),
  }),
});

/** Null when `value` is a usable encoding for rows of `width` cells; else why not, in one line. */
export function encodingProblem(value: unknown, width: number): string | null {
  const parsed = ColumnEncodingSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `columns.${issue.path.join('.')}: ${issue.message}`;
  }
  const e = parsed.data;
  if (e.names.length !== width || e.codings.length !== width) return `columns: reads ${e.names.length} columns, the table has ${width}`;
  const known = new Set(e.names);
  const unknown = e.fitted.columns.find((c) => !known.has(c.name));
  if (unknown) return `columns.fitted: column "${unknown.name}" is not one of the table's`;
  const widths = e.fitted.columns.reduce((a, c) => a + featureNames(c).length, 0);
  if (widths !== e.fitted.features.length) return `columns.fitted: its columns give ${widths} inputs, "features" names ${e.fitted.features.length}`;
  return null;
}

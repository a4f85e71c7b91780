/**
 * Turns a task file into a task: checks the file against the schema, reads its data files
 * (only inside the task directory: `..`, absolute paths and symlinks that lead out are refused),
 * builds the dataset (numeric features, a class or a number per row), refuses a target that
 * leaks into the features, and makes the supervised task definition the registry takes
 * (`define.ts`). The hidden test split is not made here: the harness draws it from the evaluation
 * secret (`supervised/evaluate.ts`, with what `evaluate.ts` reads from the file), like for every
 * built-in task.
 *
 * Every problem is one line that names the field; all lines of a file come back together in a
 * `TaskFileError`.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { Dataset } from '../../spec/data.js';
import { validateSpec } from '../../inner/spec-check.js';
import { supervisedBrief } from '../supervised/define.js';
import type { ExtraTask } from '../extra.js';
import { builtInTaskIds } from '../extra.js';
import {
  CLASSIFICATION_METRICS,
  type ControlTaskFile,
  type SupervisedTaskFile,
  type TaskFile,
  TaskFileSchema,
  parseTaskText,
  schemaProblems,
} from './schema.js';
import { type Table, TableError, type TableFormat, formatOf, readTable } from './table.js';
import { DistinctRows, type NearCopyRule, NearCopyIndex } from './near-copies.js';
import { type ExtraSource, poolSizeOf, supervisedFileTask, taskFileAnchors } from './define.js';
import { leakProblems } from './leaks.js';

/** Largest task file (bytes). */
export const MAX_TASK_FILE_BYTES = 1024 * 1024;
/** Fewest usable rows of a data file. */
export const MIN_ROWS = 20;

/** The problems of one task file, one line each (the message joins them). */
export class TaskFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(problems.map((p) => `${file}: ${p}`).join('\n'));
  }
}

/** A task file turned into a task. */
export interface LoadedTask {
  file: string;
  task: TaskFile;
  /** What the registry takes. */
  extra: ExtraTask;
  /** Facts worth telling the user (rows dropped, sizes). */
  notes: string[];
}

/** An error of a control task loader that names the file's field itself (`variables: …`). */
export class TaskFieldError extends Error {}

/** How control (Gymnasium) task files are loaded; the Gymnasium bridge sets it. */
export type ControlTaskLoader = (task: ControlTaskFile, file: string) => Promise<ExtraTask>;
let controlLoader: ControlTaskLoader | null = null;

/** Wires control task files to a loader (the Gymnasium bridge); until then they are refused. */
export function setControlTaskLoader(loader: ControlTaskLoader | null): void {
  controlLoader = loader;
}

/** Problems gathered while loading, thrown together. */
class Problems {
  readonly lines: string[] = [];
  add(line: string): void {
    if (!this.lines.includes(line)) this.lines.push(line);
  }
}

/**
 * Resolves `rel` (a path in the task file at `file`) inside `root`: the real path (symlinks
 * followed) must lie in the real task directory and be a regular file.
 */
export function resolveInside(rel: string, file: string, root: string): { path: string } | { problem: string } {
  if (isAbsolute(rel)) return { problem: `"${rel}" is an absolute path; give a path relative to the task file's folder` };
  const target = resolve(dirname(file), rel);
  let real: string;
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return { problem: `the task directory ${root} does not exist` };
  }
  try {
    real = realpathSync(target);
  } catch {
    return { problem: `"${rel}" does not exist (looked for ${target})` };
  }
  const inside = (p: string): boolean => p === realRoot || p.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep);
  if (!inside(real))
    return {
      problem: `"${rel}" leads outside the task directory ${relative(process.cwd(), root) || '.'}${real !== target ? ` (through a link to ${real})` : ''}`,
    };
  if (!statSync(real).isFile()) return { problem: `"${rel}" is not a regular file` };
  return { path: real };
}

/** An identifier for a column name (feature names appear in weight expressions). */
export function featureName(column: string): string {
  let n = column
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  if (n === '') n = 'column';
  if (/^[0-9]/.test(n)) n = `f_${n}`;
  return n;
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
interface Rows {
  x: number[][];
  labels: (string | number)[];
  dropped: number;
}

function tableRows(table: Table, spec: SupervisedTaskFile['data'], name: string, field: string, p: Problems): Rows | null {
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
  if (badTarget)
    p.add(
      `${field}target: column "${spec.target}" is not ${spec.type === 'regression' ? 'numeric' : 'a class label'} (${badTarget})${spec.type === 'regression' ? '; use type "classification" for labels' : ''}`,
    );
  if (missingCols.length) return null;
  if (dropped > 0 && spec.missing === 'error' && firstMissing)
    p.add(`${field}missing: ${dropped} row(s) of ${name} have an empty value (first: ${firstMissing}); set "missing": "drop-row" to drop them`);
  return { x, labels, dropped };
}

/** Sorted class names: numerically when every label is a number, else as text. */
function classList(labels: (string | number)[]): string[] {
  const distinct = [...new Set(labels.map(String))];
  return distinct.every((l) => l !== '' && Number.isFinite(Number(l))) ? distinct.sort((a, b) => Number(a) - Number(b)) : distinct.sort();
}

/** The near-copy rule in words: "within 0.029 std of a main row in every feature, or 0.0067 std in all but 1" (the main file's std). */
function ruleWords(rule: NearCopyRule): string {
  const std = (v: number): string => `${Number(v.toPrecision(2))} std`;
  return `within ${std(rule.tolerance)} of a main row in every feature${rule.trimmed ? `, or ${std(rule.trimmed.tolerance)} in all but ${rule.trimmed.ignore}` : ''}`;
}

/** Loads a supervised task file (its data files read and checked). */
async function loadSupervised(task: SupervisedTaskFile, file: string, root: string, p: Problems): Promise<LoadedTask | null> {
  const notes: string[] = [];
  const data = task.data;
  // A clashing id (found before) does not stop the checks of the data: every problem in one pass.
  const blocked = (): boolean => p.lines.some((l) => !l.startsWith('id: '));
  if (data.type === 'regression' && (CLASSIFICATION_METRICS as readonly string[]).includes(task.metric))
    p.add(`metric: "${task.metric}" needs a classification target; use rmse, mae or r2`);
  if (data.type === 'classification' && !(CLASSIFICATION_METRICS as readonly string[]).includes(task.metric))
    p.add(`metric: "${task.metric}" needs a regression target; use accuracy, macro-f1 or log-loss`);
  if (data.features.includes(data.target))
    p.add(`data.features[${data.features.indexOf(data.target)}]: the target column "${data.target}" is also a feature: it would leak the answer`);
  const dupFeature = data.features.find((f, i) => data.features.indexOf(f) !== i);
  if (dupFeature) p.add(`data.features: column "${dupFeature}" is listed twice`);
  const names = data.features.map(featureName);
  names.forEach((n, i) => {
    const j = names.indexOf(n);
    if (j !== i && data.features[j] !== data.features[i])
      p.add(`data.features[${i}]: columns "${data.features[j]}" and "${data.features[i]}" both become the variable name "${n}"; rename one`);
    if (n === 'label') p.add(`data.features[${i}]: a feature may not be called "label" (the weight expression's name of the target); rename the column`);
  });
  for (const v of Object.keys(task.variables)) {
    if (v !== data.target && !data.features.includes(v)) p.add(`variables.${v}: not the target or a feature (variables are keyed by column name)`);
  }
  const sourceIds = [data.id, ...data.sources.map((s) => s.id)];
  const dupSource = sourceIds.find((s, i) => sourceIds.indexOf(s) !== i);
  if (dupSource) p.add(`data.sources: the source id "${dupSource}" is used twice`);
  if (task.baseline.source && !sourceIds.includes(task.baseline.source))
    p.add(`baseline.source: "${task.baseline.source}" is not a source (sources: ${sourceIds.join(', ')})`);
  if (blocked()) return null;

  const read = async (rel: string, fmt: TableFormat | undefined, field: string): Promise<{ table: Table; name: string } | null> => {
    const where = resolveInside(rel, file, root);
    if ('problem' in where) {
      p.add(`${field}: ${where.problem}`);
      return null;
    }
    try {
      return { table: await readTable(where.path, fmt ?? formatOf(where.path)), name: basename(rel) };
    } catch (err) {
      if (err instanceof TableError) p.add(`${field}: ${err.message}`);
      else p.add(`${field}: cannot read "${rel}" (${(err as Error).message.split('\n')[0]})`);
      return null;
    }
  };

  const main = await read(data.file, data.format, 'data.file');
  if (!main) return null;
  const rows = tableRows(main.table, data, main.name, 'data.', p);
  if (!rows || blocked()) return null;
  if (rows.x.length === 0) {
    p.add(`data.file: ${main.name} has no usable rows (${main.table.rows.length} rows, ${rows.dropped} with an empty value)`);
    return null;
  }
  if (rows.x.length < MIN_ROWS) {
    p.add(`data.file: ${main.name} has ${rows.x.length} usable rows; a task needs at least ${MIN_ROWS} (a hidden test set is split from them)`);
    return null;
  }
  if (rows.dropped > 0) notes.push(`${rows.dropped} of ${main.table.rows.length} rows of ${main.name} dropped (an empty value in a used column)`);

  const descriptions: Record<string, string> = {};
  data.features.forEach((c, j) => (descriptions[names[j]] = task.variables[c] ?? c));
  const targetName = featureName(data.target);
  descriptions[targetName] = task.variables[data.target] ?? data.target;
  const classes = data.type === 'classification' ? classList(rows.labels) : undefined;
  if (classes && classes.length < 2) p.add(`data.target: column "${data.target}" has a single class ("${classes[0]}"); nothing to learn`);
  if (classes && classes.length > 1000) p.add(`data.target: column "${data.target}" has ${classes.length} classes (at most 1000); is it a regression target?`);
  const y = classes ? rows.labels.map((l) => classes.indexOf(String(l))) : (rows.labels as number[]);
  if (!classes && y.every((v) => v === y[0])) p.add(`data.target: column "${data.target}" has the same value on every row; nothing to learn`);
  if (blocked()) return null;
  const dataset: Dataset = {
    name: task.id,
    features: names,
    target: targetName,
    kind: data.type,
    ...(classes ? { classes } : {}),
    x: rows.x,
    y,
    descriptions,
    summary: `${main.name} (${rows.x.length} rows)`,
  };
  for (const problem of leakProblems(dataset, data.features)) p.add(problem);
  if (blocked()) return null;

  // Extra sources: same columns, labels among the main file's classes, and near-copies of main rows found.
  const extras: ExtraSource[] = [];
  let index: NearCopyIndex | null = null;
  for (const [i, s] of data.sources.entries()) {
    const field = `data.sources[${i}]`;
    const t = await read(s.file, s.format, `${field}.file`);
    if (!t) continue;
    const r = tableRows(t.table, { ...data, file: s.file }, t.name, `${field}.`, p);
    if (!r) continue;
    if (r.x.length === 0) {
      p.add(`${field}.file: ${t.name} has no usable rows`);
      continue;
    }
    if (r.dropped > 0) notes.push(`${r.dropped} of ${t.table.rows.length} rows of ${t.name} dropped (an empty value in a used column)`);
    let sy: number[];
    if (classes) {
      const unknown = r.labels.map(String).find((l) => !classes.includes(l));
      if (unknown !== undefined) {
        p.add(`${field}: label "${unknown}" of ${t.name} is not a class of ${main.name} (classes: ${classes.slice(0, 20).join(', ')})`);
        continue;
      }
      sy = r.labels.map((l) => classes.indexOf(String(l)));
    } else sy = r.labels as number[];
    index ??= new NearCopyIndex(new DistinctRows(dataset.x));
    const near = index.find(r.x);
    if (near.copies > 0) {
      notes.push(
        `${near.copies} of ${r.x.length} rows of ${t.name} are near-copies of rows of ${main.name} (${ruleWords(index.rule)}); ` +
          `those of hidden test rows (about ${Math.round(task.split.testFraction * 100)} %) are dropped from source ${s.id}`,
      );
    }
    extras.push({ id: s.id, description: s.description, x: r.x, y: sy, near, distinct: index.distinct, rule: ruleWords(index.rule) });
  }
  if (blocked()) return null;

  const anchors = taskFileAnchors(task);
  if (anchors?.random !== undefined && anchors.reference !== undefined && !(anchors.reference > anchors.random)) {
    p.add(`anchors: the reference (${task.anchors.reference}) must be better than the trivial score (${task.anchors.trivial}) in ${task.metric}`);
    return null;
  }
  const poolSize = poolSizeOf(task, rows.x.length);
  const def = supervisedFileTask(task, dataset, main.name, extras);
  const checked = validateSpec(def.baseline, supervisedBrief(def));
  if (!checked.ok) for (const issue of checked.error.issues) p.add(`baseline: ${issue.path || '(spec)'}: ${issue.message}`);
  if (blocked()) return null;
  notes.unshift(
    `${data.type} of "${data.target}" from ${names.length} feature(s) on ${rows.x.length} rows (${rows.x.length - poolSize} held out for the hidden evaluation); ` +
      `sources ${[data.id, ...extras.map((e) => e.id)].join(', ')}; metric ${task.metric}`,
  );
  return { file, task, extra: { kind: 'supervised', def, origin: file, madeFrom: { taskFile: task } }, notes };
}

/**
 * Loads one task file; `root` is the task directory its data must stay in (default: its own
 * folder). Throws `TaskFileError` with every problem, one line each.
 */
export async function loadTaskFile(file: string, root = dirname(file)): Promise<LoadedTask> {
  const p = new Problems();
  const shown = relative(process.cwd(), file) || file;
  let text: string;
  try {
    const info = statSync(file);
    if (!info.isFile()) throw new TaskFileError(shown, ['not a regular file']);
    if (info.size > MAX_TASK_FILE_BYTES) throw new TaskFileError(shown, [`${info.size} bytes is over the ${MAX_TASK_FILE_BYTES}-byte limit of a task file`]);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof TaskFileError) throw err;
    throw new TaskFileError(shown, [`cannot read the task file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`]);
  }
  let raw: unknown;
  try {
    raw = parseTaskText(text);
  } catch (err) {
    throw new TaskFileError(shown, [`not valid JSON (${(err as Error).message})`]);
  }
  const parsed = TaskFileSchema.safeParse(raw);
  if (!parsed.success) throw new TaskFileError(shown, schemaProblems(parsed.error));
  const task = parsed.data;
  if (builtInTaskIds().includes(task.id)) p.add(`id: "${task.id}" clashes with a built-in task; choose another id`);
  if (task.kind === 'control') {
    if (p.lines.length) throw new TaskFileError(shown, p.lines);
    if (!controlLoader) throw new TaskFileError(shown, ['environment.gymnasium: gymnasium tasks need the Gymnasium bridge']);
    try {
      return { file, task, extra: await controlLoader(task, file), notes: [] };
    } catch (err) {
      const line = (err as Error).message.split('\n')[0];
      // The loader's own errors name their field (`variables: …`); the bridge's are about the environment.
      throw new TaskFileError(shown, [err instanceof TaskFieldError ? line : `environment.gymnasium: ${line}`]);
    }
  }
  const loaded = await loadSupervised(task, file, root, p);
  if (!loaded || p.lines.length) throw new TaskFileError(shown, p.lines);
  return loaded;
}

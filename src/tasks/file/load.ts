/**
 * Turns a task file into a task: checks the file against the schema, reads its data files
 * (only inside the task directory: `..`, absolute paths and symlinks that lead out are refused),
 * builds the dataset (numeric features, a class or a number per row: `rows.ts`), refuses a target that
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
import { type Rows, classList, tableRows } from './rows.js';

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

/** The near-copy rule in words: "within 0.029 std of a main row in every feature, or 0.0067 std in all but 1" (the main file's std). */
function ruleWords(rule: NearCopyRule): string {
  const std = (v: number): string => `${Number(v.toPrecision(2))} std`;
  const trimmed = rule.trimmed ? `, or ${std(rule.trimmed.tolerance)} in all but ${rule.trimmed.ignore}` : '';
  return `within ${std(rule.tolerance)} of a main row in every feature${trimmed}`;
}

/** What the phases of loading a supervised task file share. */
interface SupervisedLoad {
  task: SupervisedTaskFile;
  file: string;
  /** The task directory its data must stay in. */
  root: string;
  p: Problems;
  notes: string[];
}

/** Whether a problem other than a clashing id was found: a clash does not stop the checks of the data (every problem in one pass). */
const blocked = (p: Problems): boolean => p.lines.some((l) => !l.startsWith('id: '));

/** Phase 1: the file's fields checked against each other (metric, columns, variables, sources); the features' identifiers. */
function checkFields(l: SupervisedLoad): string[] {
  const { task, p } = l;
  const data = task.data;
  if (data.type === 'regression' && (CLASSIFICATION_METRICS as readonly string[]).includes(task.metric))
    p.add(`metric: "${task.metric}" needs a classification target; use rmse, mae or r2`);
  if (data.type === 'classification' && !(CLASSIFICATION_METRICS as readonly string[]).includes(task.metric))
    p.add(`metric: "${task.metric}" needs a regression target; use accuracy, macro-f1 or log-loss`);
  if (data.features.includes(data.target))
    p.add(`data.features[${data.features.indexOf(data.target)}]: the target column "${data.target}" is also a feature: it would leak the answer`);
  data.categorical.forEach((c, i) => {
    if (!data.features.includes(c)) p.add(`data.categorical[${i}]: "${c}" is not a feature`);
  });
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
  return names;
}

/** Reads the data file at `rel` (inside the task directory); null, with the problem added, when it cannot. */
async function readData(l: SupervisedLoad, rel: string, fmt: TableFormat | undefined, field: string): Promise<{ table: Table; name: string } | null> {
  const where = resolveInside(rel, l.file, l.root);
  if ('problem' in where) {
    l.p.add(`${field}: ${where.problem}`);
    return null;
  }
  try {
    return { table: await readTable(where.path, fmt ?? formatOf(where.path)), name: basename(rel) };
  } catch (err) {
    if (err instanceof TableError) l.p.add(`${field}: ${err.message}`);
    else l.p.add(`${field}: cannot read "${rel}" (${(err as Error).message.split('\n')[0]})`);
    return null;
  }
}

const droppedWhy = (missing: SupervisedTaskFile['data']['missing']): string => (missing === 'keep' ? 'an empty target' : 'an empty value in a used column');

/** Rows for the near-copy search: a missing cell takes the column's median, so that rows are points (a code is a number there). */
function nearCopyView(x: number[][]): number[][] {
  if (!x.some((row) => row.some(Number.isNaN))) return x;
  const medians = (x[0] ?? []).map((_, j) => {
    const v = x
      .map((row) => row[j])
      .filter((a) => !Number.isNaN(a))
      .sort((a, b) => a - b);
    return v.length ? v[Math.floor(v.length / 2)] : 0;
  });
  return x.map((row) => row.map((v, j) => (Number.isNaN(v) ? medians[j] : v)));
}

/** Phase 2: the main data file read and its rows checked (enough usable rows for a hidden test split). */
async function loadMain(l: SupervisedLoad): Promise<{ main: { table: Table; name: string }; rows: Rows } | null> {
  const { task, p } = l;
  const data = task.data;
  const main = await readData(l, data.file, data.format, 'data.file');
  if (!main) return null;
  const rows = tableRows(main.table, data, main.name, 'data.', p);
  if (!rows || blocked(p)) return null;
  if (rows.x.length === 0) {
    p.add(`data.file: ${main.name} has no usable rows (${main.table.rows.length} rows, ${rows.dropped} with an empty value)`);
    return null;
  }
  if (rows.x.length < MIN_ROWS) {
    p.add(`data.file: ${main.name} has ${rows.x.length} usable rows; a task needs at least ${MIN_ROWS} (a hidden test set is split from them)`);
    return null;
  }
  l.notes.push(...rows.notes);
  if (rows.dropped > 0) l.notes.push(`${rows.dropped} of ${main.table.rows.length} rows of ${main.name} dropped (${droppedWhy(data.missing)})`);
  return { main, rows };
}

/** Phase 3: the dataset of the main file (classes, targets, descriptions), refused when its target leaks or says nothing. */
function mainDataset(
  l: SupervisedLoad,
  main: { table: Table; name: string },
  rows: Rows,
  names: string[],
): { dataset: Dataset; classes: string[] | undefined } | null {
  const { task, p } = l;
  const data = task.data;
  const descriptions: Record<string, string> = {};
  data.features.forEach((c, j) => (descriptions[names[j]] = task.variables[c] ?? c));
  const targetName = featureName(data.target);
  descriptions[targetName] = task.variables[data.target] ?? data.target;
  const classes = data.type === 'classification' ? classList(rows.labels) : undefined;
  if (classes && classes.length < 2) p.add(`data.target: column "${data.target}" has a single class ("${classes[0]}"); nothing to learn`);
  if (classes && classes.length > 1000) p.add(`data.target: column "${data.target}" has ${classes.length} classes (at most 1000); is it a regression target?`);
  const y = classes ? rows.labels.map((label) => classes.indexOf(String(label))) : (rows.labels as number[]);
  if (!classes && y.every((v) => v === y[0])) p.add(`data.target: column "${data.target}" has the same value on every row; nothing to learn`);
  if (blocked(p)) return null;
  const dataset: Dataset = {
    name: task.id,
    features: names,
    target: targetName,
    kind: data.type,
    ...(classes ? { classes } : {}),
    ...(rows.columns ? { columns: rows.columns } : {}),
    x: rows.x,
    y,
    descriptions,
    summary: `${main.name} (${rows.x.length} rows)`,
  };
  for (const problem of leakProblems(dataset, data.features)) p.add(problem);
  return blocked(p) ? null : { dataset, classes };
}

/** Phase 4: the extra sources: same columns, labels among the main file's classes, and near-copies of main rows found. */
async function loadExtras(l: SupervisedLoad, dataset: Dataset, classes: string[] | undefined, mainName: string): Promise<ExtraSource[]> {
  const { task, p } = l;
  const data = task.data;
  const extras: ExtraSource[] = [];
  let index: NearCopyIndex | null = null;
  for (const [i, s] of data.sources.entries()) {
    const field = `data.sources[${i}]`;
    const t = await readData(l, s.file, s.format, `${field}.file`);
    if (!t) continue;
    const r = tableRows(t.table, { ...data, file: s.file }, t.name, `${field}.`, p, dataset.columns ?? dataset.features.map(() => ({ kind: 'numeric' })));
    if (!r) continue;
    l.notes.push(...r.notes);
    // An extra source with missing cells makes the task's rows coded too (every feature numeric).
    if (r.columns && !dataset.columns) dataset.columns = r.columns;
    if (r.x.length === 0) {
      p.add(`${field}.file: ${t.name} has no usable rows`);
      continue;
    }
    if (r.dropped > 0) l.notes.push(`${r.dropped} of ${t.table.rows.length} rows of ${t.name} dropped (${droppedWhy(data.missing)})`);
    let sy: number[];
    if (classes) {
      const unknown = r.labels.map(String).find((label) => !classes.includes(label));
      if (unknown !== undefined) {
        p.add(`${field}: label "${unknown}" of ${t.name} is not a class of ${mainName} (classes: ${classes.slice(0, 20).join(', ')})`);
        continue;
      }
      sy = r.labels.map((label) => classes.indexOf(String(label)));
    } else sy = r.labels as number[];
    index ??= new NearCopyIndex(new DistinctRows(nearCopyView(dataset.x)));
    const near = index.find(nearCopyView(r.x));
    if (near.copies > 0) {
      l.notes.push(
        `${near.copies} of ${r.x.length} rows of ${t.name} are near-copies of rows of ${mainName} (${ruleWords(index.rule)}); ` +
          `those of hidden test rows (about ${Math.round(task.split.testFraction * 100)} %) are dropped from source ${s.id}`,
      );
    }
    extras.push({ id: s.id, description: s.description, x: r.x, y: sy, near, distinct: index.distinct, rule: ruleWords(index.rule) });
  }
  return extras;
}

/** Loads a supervised task file (its data files read and checked). */
async function loadSupervised(task: SupervisedTaskFile, file: string, root: string, p: Problems): Promise<LoadedTask | null> {
  const l: SupervisedLoad = { task, file, root, p, notes: [] };
  const data = task.data;
  const names = checkFields(l);
  if (blocked(p)) return null;
  const loaded = await loadMain(l);
  if (!loaded) return null;
  const { main, rows } = loaded;
  const made = mainDataset(l, main, rows, names);
  if (!made) return null;
  const extras = await loadExtras(l, made.dataset, made.classes, main.name);
  if (blocked(p)) return null;
  // Phase 5: the anchors and the baseline spec checked against the task the file makes.
  const anchors = taskFileAnchors(task);
  if (anchors?.random !== undefined && anchors.reference !== undefined && !(anchors.reference > anchors.random)) {
    p.add(`anchors: the reference (${task.anchors.reference}) must be better than the trivial score (${task.anchors.trivial}) in ${task.metric}`);
    return null;
  }
  const poolSize = poolSizeOf(task, rows.x.length);
  const def = supervisedFileTask(task, made.dataset, main.name, extras);
  const checked = validateSpec(def.baseline, supervisedBrief(def));
  if (!checked.ok) for (const issue of checked.error.issues) p.add(`baseline: ${issue.path || '(spec)'}: ${issue.message}`);
  if (blocked(p)) return null;
  l.notes.unshift(
    `${data.type} of "${data.target}" from ${names.length} feature(s) on ${rows.x.length} rows ` +
      `(${rows.x.length - poolSize} held out for the hidden evaluation); sources ${def.sources.map((s) => s.id).join(', ')}; metric ${task.metric}`,
  );
  return { file, task, extra: { kind: 'supervised', def, origin: file, madeFrom: { taskFile: task } }, notes: l.notes };
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

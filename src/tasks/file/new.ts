/**
 * Starting task files, as `rrl task new` writes them: from a data file and its target column
 * (every column a practitioner would use becomes a feature, numbers and categories alike, with
 * empty cells; mostly empty columns, identifiers and copies of the target are left out, each
 * said), or from a
 * Gymnasium id (the fields only; nothing is probed). The user then edits the words.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, relative, resolve, sep } from 'node:path';
import { TASK_ID } from './schema.js';
import { type Table, formatOf, readTable } from './table.js';
import { TaskFileError, loadTaskFile } from './load.js';
import { columnFacts } from './rows.js';

/** What `rrl task new --data` was asked. */
export interface NewFromData {
  data: string;
  target: string;
  /** Where the task file goes (default `tasks/<id>.json`). */
  out?: string;
  id?: string;
  type?: 'classification' | 'regression';
}

/** What was written, and what the user should know. */
export interface NewResult {
  out: string;
  task: Record<string, unknown>;
  notes: string[];
}

/** A task id from a name: lowercase words joined by hyphens. */
export function taskIdFrom(name: string): string {
  const id = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .replace(/^[0-9-]+/, '');
  return TASK_ID.test(id) ? id : 'my-task';
}

const isNumberCell = (v: unknown): boolean =>
  (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean' || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)));
const isEmptyCell = (v: unknown): boolean =>
  v === null || v === undefined || (typeof v === 'string' && ['', 'na', 'nan', 'null', 'none', 'n/a', '?'].includes(v.trim().toLowerCase()));

/** A column this empty is left out unless the user adds it back. */
export const MOSTLY_EMPTY = 0.5;
/** A minority class under this share makes accuracy a poor metric (the majority predictor nearly maxes it). */
export const IMBALANCED = 0.2;

/** The features a practitioner would start from, and every column left out with its reason. */
interface FeatureChoice {
  features: string[];
  categorical: string[];
  notes: string[];
}

const percent = (v: number): string => `${Math.round(v * 100)} %`;

/** Every column but the target, kept as a feature or left out with the reason said. */
function chooseFeatures(t: Table, target: string): FeatureChoice {
  const features: string[] = [];
  const categorical: string[] = [];
  const out = { empty: [] as string[], mostly: [] as string[], ids: [] as string[] };
  const gaps: string[] = [];
  for (const c of t.columns) {
    if (c === target) continue;
    const f = columnFacts(t.rows.map((r) => r[c]));
    const empty = 1 - f.present / Math.max(1, f.rows);
    if (f.present === 0) out.empty.push(c);
    else if (empty >= MOSTLY_EMPTY) out.mostly.push(`${c} (${percent(empty)} empty)`);
    else if (f.identifier) out.ids.push(c);
    else {
      features.push(c);
      if (f.kind === 'categorical') categorical.push(c);
      if (empty > 0) gaps.push(`${c} (${percent(empty)})`);
    }
  }
  const notes: string[] = [];
  if (categorical.length) notes.push(`categorical: ${categorical.join(', ')}; each job chooses their encoding (dataset.columns)`);
  if (gaps.length) notes.push(`kept with empty cells: ${gaps.join(', ')}; their rows are kept and each job chooses how to fill them`);
  if (out.mostly.length) notes.push(`left out (mostly empty): ${out.mostly.join(', ')}; add one to data.features to use it anyway`);
  if (out.ids.length) notes.push(`left out (a different value on most rows: an identifier or free text): ${out.ids.join(', ')}`);
  if (out.empty.length) notes.push(`left out (no value in any row): ${out.empty.join(', ')}`);
  return { features, categorical, notes };
}

/** Classification when the target is text, or a number with at most 10 distinct whole values. */
function guessType(t: Table, target: string): 'classification' | 'regression' {
  const values = t.rows.map((r) => r[target]).filter((v) => !isEmptyCell(v));
  if (!values.every(isNumberCell)) return 'classification';
  const distinct = new Set(values.map((v) => Number(v)));
  return distinct.size <= 10 && [...distinct].every(Number.isInteger) ? 'classification' : 'regression';
}

/** The metric that fits the target: macro-F1 where the smallest class is rare (the majority predictor cannot max it), else accuracy; RMSE for numbers. */
function chooseMetric(t: Table, target: string, type: 'classification' | 'regression'): { metric: string; note?: string } {
  if (type === 'regression') return { metric: 'rmse' };
  const counts = new Map<string, number>();
  for (const r of t.rows) if (!isEmptyCell(r[target])) counts.set(String(r[target]).trim(), (counts.get(String(r[target]).trim()) ?? 0) + 1);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const smallest = Math.min(...counts.values()) / Math.max(1, total);
  if (counts.size >= 2 && smallest < IMBALANCED)
    return {
      metric: 'macro-f1',
      note: `metric macro-f1: the rarest class is ${percent(smallest)} of the rows, and always predicting the commonest would score well on accuracy`,
    };
  return { metric: 'accuracy' };
}

/** Writes a starting supervised task file for a data file; refuses to overwrite one. */
export async function newTaskFromData(o: NewFromData): Promise<NewResult> {
  const dataPath = resolve(o.data);
  if (!formatOf(dataPath)) throw new Error(`--data: ${o.data}: use a .csv, .jsonl or .parquet file`);
  const table = await readTable(dataPath);
  if (!table.columns.includes(o.target)) throw new Error(`--target: column "${o.target}" is not in ${basename(o.data)} (columns: ${table.columns.join(', ')})`);
  const id = o.id ?? taskIdFrom(basename(o.data).replace(/\.[^.]+$/, ''));
  if (!TASK_ID.test(id)) throw new Error(`--id: "${id}" must be lowercase words joined by hyphens`);
  const out = resolve(o.out ?? `tasks/${id}.json`);
  if (existsSync(out)) throw new Error(`--out: ${o.out ?? relative(process.cwd(), out)} exists; remove it or choose another path`);
  const notes: string[] = [];
  // The data must lie in the task file's folder: copy it there when it lies elsewhere.
  const outDir = dirname(out);
  let dataRel = relative(outDir, dataPath);
  if (dataRel.startsWith(`..${sep}`) || dataRel === '..' || resolve(outDir, dataRel) !== dataPath || dataRel.startsWith(sep)) {
    const copy = resolve(outDir, basename(dataPath));
    if (existsSync(copy) && !readFileSync(copy).equals(readFileSync(dataPath)))
      throw new Error(`--data: ${basename(dataPath)} must lie in the task directory, and ${relative(process.cwd(), copy)} exists with other contents`);
    mkdirSync(outDir, { recursive: true });
    copyFileSync(dataPath, copy);
    notes.push(`copied ${o.data} to ${relative(process.cwd(), copy)} (a task's data lies in its task directory)`);
    dataRel = basename(dataPath);
  }
  const type = o.type ?? guessType(table, o.target);
  const chosen = chooseFeatures(table, o.target);
  const numeric = chosen.features;
  if (numeric.length === 0) throw new Error(`${basename(o.data)}: no usable column besides "${o.target}" to use as a feature`);
  notes.push(...chosen.notes);
  const metric = chooseMetric(table, o.target, type);
  if (metric.note) notes.push(metric.note);
  const noTarget = table.rows.filter((r) => isEmptyCell(r[o.target])).length;
  const variables: Record<string, string> = {};
  for (const c of [...numeric, o.target]) variables[c] = `${c}: what it measures, and its unit`;
  const task = {
    id,
    title: `Predict ${o.target} from ${basename(o.data)}`,
    description:
      `Predict ${o.target} of a row of ${basename(o.data)} from its other columns. ` +
      'Describe here what a row is, where the data comes from and what matters.',
    kind: 'supervised',
    variables,
    data: { file: dataRel.split(sep).join('/'), target: o.target, type, features: numeric },
    metric: metric.metric,
    split: { testFraction: 0.3 },
    caps: { maxWallSeconds: 120 },
    experiments: 'held-out',
  };
  notes.unshift(
    `${type} of "${o.target}" from ${numeric.length} of ${table.columns.length - 1} column(s) on ${table.rows.length - noTarget} of ${table.rows.length} rows` +
      `${noTarget ? ` (${noTarget} with an empty target left out)` : ''}; edit the title, description ` +
      `and variables, then run \`rrl task validate ${relative(process.cwd(), out)}\``,
  );
  mkdirSync(outDir, { recursive: true });
  writeFileSync(out, `${JSON.stringify(task, null, 2)}\n`, { flag: 'wx' });
  // Check it as `rrl task validate` would: features that copy the target are taken out again.
  try {
    await loadTaskFile(out);
  } catch (err) {
    if (!(err instanceof TaskFileError)) throw err;
    const leaks = err.problems
      .map((p) => p.match(/^data\.features\[\d+\]: column "(.*)" (?:is a copy of|decides) the target/)?.[1])
      .filter((c): c is string => c !== undefined);
    if (leaks.length) {
      task.data.features = task.data.features.filter((c) => !leaks.includes(c));
      for (const c of leaks) delete variables[c];
      writeFileSync(out, `${JSON.stringify(task, null, 2)}\n`);
      notes.push(`left out (a copy of the target): ${leaks.join(', ')}`);
    }
    const rest = err.problems.filter((p) => !leaks.some((c) => p.includes(`column "${c}"`)));
    for (const p of rest) notes.push(`to fix: ${p}`);
  }
  return { out, task, notes };
}

/** Writes a starting control task file for a Gymnasium environment id (fields only). */
export function newTaskFromGymnasium(o: { gymnasium: string; out?: string; id?: string }): NewResult {
  if (!/^[A-Za-z0-9_./:-]+-v\d+$/.test(o.gymnasium)) throw new Error(`--gymnasium: "${o.gymnasium}" is not a Gymnasium id such as CartPole-v1`);
  const id = o.id ?? taskIdFrom(o.gymnasium.replace(/-v\d+$/, '').replace(/([a-z])([A-Z])/g, '$1-$2'));
  if (!TASK_ID.test(id)) throw new Error(`--id: "${id}" must be lowercase words joined by hyphens`);
  const out = resolve(o.out ?? `tasks/${id}.json`);
  if (existsSync(out)) throw new Error(`--out: ${relative(process.cwd(), out)} exists; remove it or choose another path`);
  const task = {
    id,
    title: `Control ${o.gymnasium}`,
    description: `Learn a policy for the Gymnasium environment ${o.gymnasium}. Describe here what the agent controls and what a good episode looks like.`,
    kind: 'control',
    variables: {},
    environment: { gymnasium: o.gymnasium, kwargs: {} },
    metric: 'mean-return',
    split: { episodes: 20 },
    caps: { maxEnvSteps: 100_000, maxWallSeconds: 300 },
    baseline: { algorithm: 'ppo' },
    experiments: 'held-out',
  };
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(task, null, 2)}\n`, { flag: 'wx' });
  return {
    out,
    task,
    notes: [
      'name the observation values under "variables" (all of them, in order, or none); the spaces and time ' +
        'limit come from the environment when the file loads (the Gymnasium bridge, .venv/bin/python or RRL_PYTHON)',
    ],
  };
}

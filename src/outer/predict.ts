/**
 * `rrl predict`: an exported model (model.onnx and its card) run on a new table through ONNX
 * Runtime. The table's columns are matched to the card's inputs by name (as written, or as the
 * task read them: `featureName`), its cells read by the same rules as a task file's; a table that
 * does not fit the card is refused in one line before anything runs.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { featureName } from '../tasks/file/load.js';
import { labelOf, numberOf } from '../tasks/file/rows.js';
import { type Table, readTable } from '../tasks/file/table.js';
import { type InputValues, OnnxSession } from '../inner/onnx/session.js';
import { MODEL_FILE, type ModelCard, readCard } from './model-card.js';

/** Rows per call of the runtime: bounded memory, and progress on a large table. */
const BATCH_ROWS = 10_000;

/** A model and its card, as `rrl predict` takes them: the export's directory or its model.onnx. */
export interface LoadedModel {
  card: ModelCard;
  session: OnnxSession;
}

/** Loads an export; a card that does not describe the model beside it is an error in one line. */
export async function loadExport(path: string): Promise<LoadedModel> {
  if (!existsSync(path)) throw new Error(`${path}: no such file or directory`);
  const dir = statSync(path).isDirectory() ? path : dirname(path);
  const modelPath = statSync(path).isDirectory() ? join(dir, MODEL_FILE) : path;
  const card = readCard(join(dir, 'card.json'));
  if (!existsSync(modelPath)) throw new Error(`${modelPath}: the card's model is missing`);
  let session: OnnxSession;
  try {
    session = await OnnxSession.load(modelPath);
  } catch (err) {
    throw new Error(`${modelPath}: ${(err as Error).message}`);
  }
  const want = Array.isArray(card.inputs) ? card.inputs.map((i) => i.name) : ['observation'];
  const got = [...session.inputNames];
  const outputs = card.outputs.map((o) => o.name);
  if (want.length !== got.length || want.some((n) => !got.includes(n)) || outputs.some((n) => !session.outputNames.includes(n))) {
    await session.close();
    throw new Error(`${modelPath}: the card does not describe this model (card inputs ${want.join(', ')}; model inputs ${got.join(', ')})`);
  }
  return { card, session };
}

/** The predictions: a header and one row per table row, in the table's order. */
export interface Predictions {
  header: string[];
  rows: (string | number)[][];
}

/** Runs the model on every row of the table at `dataPath`; `onProgress(done, total)` after each batch. */
export async function predictFile(model: LoadedModel, dataPath: string, onProgress?: (done: number, total: number) => void): Promise<Predictions> {
  const table = await readTable(dataPath);
  const name = dataPath.split('/').pop() ?? dataPath;
  const inputs = tableInputs(model.card, table, name);
  const n = table.rows.length;
  const header = outputHeader(model.card);
  const rows: (string | number)[][] = [];
  for (let start = 0; start < n; start += BATCH_ROWS) {
    const end = Math.min(n, start + BATCH_ROWS);
    const out = await model.session.run(sliceInputs(inputs, start, end), end - start);
    rows.push(...outputRows(model.card, out, end - start));
    onProgress?.(end, n);
  }
  return { header, rows };
}

/** The table's columns as the model's inputs; a missing column, a text in a numeric column or an empty cell the model refuses is an error. */
export function tableInputs(card: ModelCard, table: Table, name: string): Record<string, InputValues> {
  const columnFor = (input: string): string => {
    const c = table.columns.find((h) => h === input) ?? table.columns.find((h) => featureName(h) === input);
    if (c === undefined) throw new Error(`${name}: no column for the model's input "${input}" (the table has: ${table.columns.slice(0, 20).join(', ')})`);
    return c;
  };
  const numbers = (column: string, missingOk: boolean): Float64Array =>
    Float64Array.from(table.rows, (row, r) => {
      const v = numberOf(row[column]);
      if (v === 'bad') throw new Error(`${name}: row ${r + 1}, column "${column}": ${JSON.stringify(String(row[column]).slice(0, 40))} is not a number`);
      if (v === 'missing' && !missingOk) throw new Error(`${name}: row ${r + 1}, column "${column}" is empty; this model takes no empty cells`);
      return v === 'missing' ? NaN : v;
    });
  if (!Array.isArray(card.inputs)) {
    const width = card.inputs.observation;
    const cols = Array.from({ length: width }, (_, j) => numbers(columnFor(`obs_${j}`), false));
    const values = new Float64Array(table.rows.length * width);
    cols.forEach((c, j) => c.forEach((v, r) => (values[r * width + j] = v)));
    return { observation: { type: 'double', values, width } };
  }
  const out: Record<string, InputValues> = {};
  for (const input of card.inputs) {
    const column = columnFor(input.name);
    out[input.name] =
      input.kind === 'numeric'
        ? { type: 'double', values: numbers(column, input.missing) }
        : {
            type: 'string',
            values: table.rows.map((row) => {
              const l = labelOf(row[column]);
              return l === 'missing' || l === 'bad' ? '' : l;
            }),
          };
  }
  return out;
}

function sliceInputs(inputs: Record<string, InputValues>, start: number, end: number): Record<string, InputValues> {
  const out: Record<string, InputValues> = {};
  for (const [k, v] of Object.entries(inputs)) {
    const w = v.type === 'double' ? (v.width ?? 1) : 1;
    out[k] = v.type === 'double' ? { ...v, values: v.values.subarray(start * w, end * w) } : { type: 'string', values: v.values.slice(start, end) };
  }
  return out;
}

/** The prediction columns: the label and a probability per class, the value, or the action. */
function outputHeader(card: ModelCard): string[] {
  if (card.task.kind === 'classification') {
    return ['label', ...(card.task.classes ?? []).map((c) => `p(${c})`)];
  }
  if (card.task.kind === 'regression') return ['prediction'];
  const a = card.outputs.find((o) => o.name === 'action');
  return a?.shape.length === 2 ? Array.from({ length: Number(a.shape[1]) }, (_, j) => `action_${j}`) : ['action'];
}

function outputRows(card: ModelCard, out: Record<string, { values: (number | string)[] }>, n: number): (string | number)[][] {
  if (card.task.kind === 'classification') {
    const p = out.probabilities.values as number[];
    const k = p.length / Math.max(1, n);
    return Array.from({ length: n }, (_, r) => [out.label.values[r], ...p.slice(r * k, (r + 1) * k)]);
  }
  if (card.task.kind === 'regression') return Array.from({ length: n }, (_, r) => [out.prediction.values[r]]);
  const a = out.action.values as number[];
  const w = a.length / Math.max(1, n);
  return Array.from({ length: n }, (_, r) => a.slice(r * w, (r + 1) * w));
}

/**
 * A trained model or policy file as one ONNX graph: everything between a table's cells and the
 * prediction — column order, category encodings (unseen levels and empty cells included),
 * imputation, missing-cell indicators, standardisation, the MLP and its head — so a user needs
 * nothing of this project to run it. All arithmetic is in double, as the engine's is.
 *
 * The encodings of a categorical column are not re-derived here: each level's row of features is
 * what the engine's own `applyColumns` gives for a cell of that level (and for an unseen level and
 * an empty cell), gathered by the level's index. The graph and the engine cannot disagree on them.
 */
import { type FittedColumn, type FittedColumns, applyColumns } from '../data/columns.js';
import type { ModelFile } from '../model.js';
import type { DenseLayer, PolicyFile } from '../policy.js';
import { GraphBuilder } from './graph.js';

/** The batch dimension's name in every input and output. */
const BATCH = 'N';
/** A level no table can have: what the engine does with an unseen level is what it does with this one. */
const UNSEEN = '\u0000unseen';

/** One input of an exported supervised model: a table column, one value per row. */
export interface ColumnInput {
  /** The input's name: the column's feature name (`rrl tasks`), an identifier. */
  name: string;
  /** `numeric`: a double tensor [N]; `categorical`: a string tensor [N]. */
  kind: 'numeric' | 'categorical';
  /**
   * Whether an empty cell is accepted (NaN in a numeric input, "" in a categorical one); a model
   * fitted on complete numeric rows has no imputation and takes none.
   */
  missing: boolean;
  /** A categorical column's levels seen in training; any other text is read as an unseen level. */
  levels?: string[];
}

/** One output of an exported model. */
export interface OutputInfo {
  name: string;
  type: 'double' | 'int64' | 'string';
  shape: (number | string)[];
  meaning: string;
}

/** An exported graph with its input contract. */
export interface OnnxGraph {
  bytes: Uint8Array;
  /** Supervised: one input per column; control: one `observation` input of this many values. */
  inputs: ColumnInput[] | { observation: number };
  outputs: OutputInfo[];
}

/** The graph of a supervised model file. */
export function modelGraph(file: ModelFile, version: string): OnnxGraph {
  const g = new GraphBuilder();
  const { features, inputs } = file.columns ? columnFeatures(g, file.columns) : plainFeatures(g, file.features);
  const standardised = file.inputNorm ? standardise(g, features, file.inputNorm) : features;
  const out = mlp(g, standardised, file.layers, file.activation);
  const outputs = file.kind === 'classification' ? classHead(g, out, file.classes ?? []) : valueHead(g, out, file.targetNorm);
  const bytes = g.encode('rrl_model', `recursive-rl ${file.kind} model (${file.features.length} inputs)`, { format: file.format }, version);
  return { bytes, inputs, outputs };
}

/** The graph of a control policy file: greedy actions for observations. */
export function policyGraph(file: PolicyFile, version: string): OnnxGraph {
  const g = new GraphBuilder();
  let x = g.input('observation', 'double', [BATCH, file.obsDim], 'raw observations, one row per state');
  if (file.obsNorm) {
    const { mean, std, clip } = file.obsNorm;
    x = g.node('Div', [g.node('Sub', [x, g.doubles('obs_mean', mean, [file.obsDim])]), g.doubles('obs_std', std, [file.obsDim])]);
    x = g.node('Max', [g.node('Min', [x, g.doubles('clip_hi', [clip], [])]), g.doubles('clip_lo', [-clip], [])]);
  }
  const out = mlp(g, x, file.layers, file.activation);
  const space = file.actionSpace;
  let outputs: OutputInfo[];
  if (space.type === 'discrete') {
    g.alias(out, 'logits');
    g.node('ArgMax', [out], { axis: { int: 1 }, keepdims: { int: 0 } }, { out: 'action' });
    outputs = [
      { name: 'action', type: 'int64', shape: [BATCH], meaning: 'the greedy action (the index of the largest logit)' },
      { name: 'logits', type: 'double', shape: [BATCH, space.n], meaning: "the policy's logit per action" },
    ];
  } else {
    const m = space.low.length;
    const hi = g.node('Min', [out, g.doubles('action_high', space.high, [m])]);
    g.node('Max', [hi, g.doubles('action_low', space.low, [m])], {}, { out: 'action' });
    outputs = [{ name: 'action', type: 'double', shape: [BATCH, m], meaning: "the greedy action: the policy's mean clipped to the action space" }];
  }
  for (const o of outputs) g.output(o.name, o.type, o.shape, o.meaning);
  const bytes = g.encode('rrl_policy', `recursive-rl policy (${file.obsDim} observations)`, { format: file.format }, version);
  return { bytes, inputs: { observation: file.obsDim }, outputs };
}

/** A column input [N] as a column [N, 1]. */
function asColumn(g: GraphBuilder, x: string): string {
  return g.node('Unsqueeze', [x, g.int64s('axis1', [1], [1])]);
}

/** Inputs of a model read on complete numeric rows: one double input per feature, concatenated. */
function plainFeatures(g: GraphBuilder, names: string[]): { features: string; inputs: ColumnInput[] } {
  const inputs: ColumnInput[] = names.map((name) => ({ name, kind: 'numeric', missing: false }));
  const cols = inputs.map((c) => asColumn(g, g.input(c.name, 'double', [BATCH], 'a number; no empty cells')));
  return { features: concat(g, cols), inputs };
}

/** Inputs of a model that reads a table's columns: each column encoded as the fitted state says. */
function columnFeatures(g: GraphBuilder, enc: NonNullable<ModelFile['columns']>): { features: string; inputs: ColumnInput[] } {
  const values = new Map<string, string>();
  const inputs: ColumnInput[] = enc.names.map((name, j) => {
    const coding = enc.codings[j];
    const fitted = enc.fitted.columns.find((f) => f.name === name);
    const levels = coding.kind === 'categorical' ? knownLevels(fitted, coding.levels) : undefined;
    const kind = coding.kind;
    const doc = kind === 'numeric' ? 'a number; NaN where the cell is empty' : 'a level as text; "" where the cell is empty';
    values.set(name, g.input(name, kind === 'numeric' ? 'double' : 'string', [BATCH], doc));
    return { name, kind, missing: true, ...(levels ? { levels } : {}) };
  });
  const parts = enc.fitted.columns.map((f) => {
    const x = values.get(f.name)!;
    return f.kind === 'numeric' ? numericColumn(g, x, f) : categoricalColumn(g, x, f, enc.fitted, inputs.find((i) => i.name === f.name)?.levels ?? []);
  });
  return { features: concat(g, parts), inputs };
}

/** The levels a categorical column's fitted state knows, with the table's own, in the table's order first. */
function knownLevels(f: FittedColumn | undefined, tableLevels: string[]): string[] {
  const fitted = !f ? [] : f.kind === 'one-hot' ? f.levels : f.kind === 'frequency' ? Object.keys(f.shares) : f.kind === 'target' ? Object.keys(f.means) : [];
  return [...new Set([...tableLevels, ...fitted])].filter((l) => l !== '');
}

/** A numeric column: the empty cell filled, standardised, and its indicator when the state has one. */
function numericColumn(g: GraphBuilder, x: string, f: Extract<FittedColumn, { kind: 'numeric' }>): string {
  const nan = g.node('IsNaN', [x]);
  const filled = g.node('Where', [nan, g.doubles('fill', [f.fill], []), x]);
  const z = asColumn(g, g.node('Div', [g.node('Sub', [filled, g.doubles('center', [f.center], [])]), g.doubles('scale', [f.scale], [])]));
  if (!f.indicator) return z;
  return concat(g, [z, asColumn(g, g.node('Cast', [nan], { to: { int: 11 } }))]);
}

/**
 * A categorical column: its text mapped to a row index (known levels, then an unseen level, then
 * the empty cell) and the row of features the engine gives a cell of that kind gathered.
 */
function categoricalColumn(g: GraphBuilder, x: string, f: FittedColumn, state: FittedColumns, levels: string[]): string {
  const unseen = levels.length;
  const cells: (string | null)[] = [...levels, UNSEEN, null];
  const rows = applyColumns({ decisions: state.decisions, columns: [f], features: [] }, [{ name: f.name, kind: 'categorical', values: cells }]);
  const width = rows[0].length;
  const index = g.node(
    'LabelEncoder',
    [x],
    { keys_strings: { strings: [...levels, ''] }, values_int64s: { ints: [...levels.map((_, i) => i), unseen + 1] }, default_int64: { int: unseen } },
    { ml: true },
  );
  return g.node('Gather', [g.doubles(`enc_${f.kind}`, rows.flat(), [rows.length, width]), index], { axis: { int: 0 } });
}

function concat(g: GraphBuilder, parts: string[]): string {
  return parts.length === 1 ? parts[0] : g.node('Concat', parts, { axis: { int: 1 } });
}

function standardise(g: GraphBuilder, x: string, norm: { mean: number[]; std: number[] }): string {
  const d = norm.mean.length;
  return g.node('Div', [g.node('Sub', [x, g.doubles('in_mean', norm.mean, [d])]), g.doubles('in_std', norm.std, [d])]);
}

/** Dense layers, `activation` between them (weights row-major [in][out], as the engine stores them). */
function mlp(g: GraphBuilder, x: string, layers: DenseLayer[], activation: 'tanh' | 'relu'): string {
  let h = x;
  layers.forEach((l, i) => {
    h = g.node('Add', [g.node('MatMul', [h, g.doubles(`w${i}`, l.weights, [l.in, l.out])]), g.doubles(`b${i}`, l.bias, [l.out])]);
    if (i < layers.length - 1) h = g.node(activation === 'tanh' ? 'Tanh' : 'Relu', [h]);
  });
  return h;
}

function classHead(g: GraphBuilder, logits: string, classes: string[]): OutputInfo[] {
  g.node('Softmax', [logits], { axis: { int: -1 } }, { out: 'probabilities' });
  const index = g.node('ArgMax', [logits], { axis: { int: 1 }, keepdims: { int: 0 } });
  g.node('Gather', [g.strings('classes', classes, [classes.length]), index], { axis: { int: 0 } }, { out: 'label' });
  const outputs: OutputInfo[] = [
    { name: 'label', type: 'string', shape: [BATCH], meaning: 'the predicted class (the most probable; the first of a tie)' },
    { name: 'probabilities', type: 'double', shape: [BATCH, classes.length], meaning: `class probabilities in the order ${JSON.stringify(classes)}` },
  ];
  for (const o of outputs) g.output(o.name, o.type, o.shape, o.meaning);
  return outputs;
}

function valueHead(g: GraphBuilder, out: string, norm: ModelFile['targetNorm']): OutputInfo[] {
  const scaled = norm ? g.node('Add', [g.node('Mul', [out, g.doubles('y_std', [norm.std], [])]), g.doubles('y_mean', [norm.mean], [])]) : out;
  g.node('Squeeze', [scaled, g.int64s('axis1', [1], [1])], {}, { out: 'prediction' });
  const outputs: OutputInfo[] = [{ name: 'prediction', type: 'double', shape: [BATCH], meaning: 'the predicted value, in the target’s units' }];
  for (const o of outputs) g.output(o.name, o.type, o.shape, o.meaning);
  return outputs;
}

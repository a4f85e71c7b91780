/**
 * Supervised training of an MLP on the job's data mixture: standardisation, Gaussian input
 * noise and mixup as augmentation; cross-entropy (with label smoothing), focal, MSE or
 * Huber loss with an optional per-example weight expression (`supervised-loss.ts`); SGD with
 * momentum, Adam or AdamW with a constant, cosine or step schedule and warm-up; dropout; early
 * stopping on the validation loss. The engine counts the examples processed and stops at the cap;
 * its wall-clock and memory caps are checked at every minibatch. The network trains on the fused
 * engine (`../nn/mlp.ts`): each loss's gradient with respect to the outputs is written out.
 *
 *   1. `setUp`: the mixture drawn and split, a table's categorical columns and missing cells encoded
 *      (`encodeColumns`), the example weights, the standardisation, the network;
 *   2. `trainEpoch`: a shuffled pass of minibatch steps (`trainStep`: augment, dropout, one optimiser step);
 *   3. `endEpoch`: the epoch's losses logged, the validation (`validate`) and early stopping.
 */
import type { TaskBrief } from '../../spec/brief.js';
import type { JobSpec, SupervisedConfig } from '../../spec/schema.js';
import { Rng, mixSeed } from '../../util/rng.js';
import { NaNError } from '../errors.js';
import { compileExpression } from '../expr/expression.js';
import { MODEL_FORMAT, type ModelFile } from '../model.js';
import type { DenseLayer } from '../policy.js';
import { orthogonal } from '../nn/init.js';
import { FusedMlp, TFJS_ADAM_EPS } from '../nn/mlp.js';
import type { SourceData, SupervisedData } from '../../spec/data.js';
import { type SupervisedLoss, lossOf, supervisedLoss } from './supervised-loss.js';
import { type ColumnEncoding, encodeRows, fitColumns, rawColumns } from '../data/columns.js';
import { type InputNorm, Minibatches, packInputs, packTargets } from './supervised-rows.js';

/** What the supervised trainer needs from the engine. */
export interface SupervisedContext {
  spec: JobSpec;
  brief: TaskBrief;
  data: SupervisedData;
  maxExamples: number;
  log(name: string, step: number, value: number): void;
  progress(examples: number): void;
  /** Throws when the job has passed its wall-clock or memory cap (called at every minibatch). */
  checkLimits(): void;
}

/** What it returns. */
export interface SupervisedResult {
  model: ModelFile;
  examples: number;
  epochs: number;
  stopReason: 'budget' | 'epochs' | 'early-stopping';
  validation: { loss: number; metric: number; metricName: string } | null;
}

/** Draws the training mixture: `size` examples by weight (all rows once when size is null). */
export function drawMixture(spec: JobSpec, data: SupervisedData, rng: Rng): SourceData {
  const chosen = spec.dataset.sources.filter((s) => s.weight > 0);
  const total = chosen.reduce((a, s) => a + s.weight, 0);
  const x: number[][] = [];
  const y: number[] = [];
  for (const s of chosen) {
    const src = data.sources[s.id];
    if (!src || src.x.length === 0) throw new Error(`dataset.sources: source "${s.id}" was not provided to the job or is empty`);
    const n = spec.dataset.size === null ? src.x.length : Math.round((spec.dataset.size * s.weight) / total);
    const order = rng.permutation(src.x.length);
    for (let k = 0; k < n; k++) {
      const i = k < order.length ? order[k] : rng.int(src.x.length); // with replacement once the source is used up
      x.push(src.x[i]);
      y.push(src.y[i]);
    }
  }
  return { x, y };
}

function meanStd(values: number[]): { mean: number; std: number } {
  const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const v = values.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, values.length);
  return { mean, std: Math.sqrt(v) || 1 };
}

/** Rows ready for the network: standardised inputs, targets and weights. */
interface Rows {
  x: Float32Array;
  y: Float32Array;
  w: Float32Array;
}

/** The best validation loss so far, with the weights that reached it. */
interface Best {
  loss: number;
  metric: number;
  weights: Float32Array | null;
  epochsSince: number;
}

/** What the phases share: the data and its split, the network and the training's progress. */
interface Supervised {
  ctx: SupervisedContext;
  cfg: SupervisedConfig;
  spec: JobSpec;
  /** The job's generator: mixture, split, shuffles, augmentation and dropout draw from it in turn. */
  rng: Rng;
  classify: boolean;
  /** Network outputs: the classes, or 1 for a regression. */
  k: number;
  /** Feature count. */
  d: number;
  all: SourceData;
  valIdx: number[];
  trainIdx: number[];
  /** Per-example weights (every drawn row) and their mean over the training rows. */
  weights: number[];
  wMean: number;
  inputNorm: InputNorm | null;
  targetNorm: { mean: number; std: number } | null;
  /** How the table's columns became the inputs; null for a numeric, complete table. */
  columns: ColumnEncoding | null;
  net: FusedMlp;
  /** Rows per minibatch. */
  batch: number;
  loss: SupervisedLoss;
  /** The validation rows, prepared once; null without a validation split. */
  val: Rows | null;
  /** Scratch: one minibatch's weights. */
  wb: Float32Array;
  examples: number;
  best: Best;
  /** Every drawn row packed for the minibatch loop, and its buffers (built at the first epoch). */
  minibatches?: Minibatches;
}

/** Set-up: the mixture drawn, shuffled and split into training and validation rows. */
function splitData(ctx: SupervisedContext, rng: Rng): { all: SourceData; valIdx: number[]; trainIdx: number[] } {
  const { spec } = ctx;
  const all = drawMixture(spec, ctx.data, rng);
  const order = rng.permutation(all.x.length);
  const nVal = Math.floor(order.length * spec.dataset.validationFraction);
  const valIdx = order.slice(0, nVal);
  const trainIdx = order.slice(nVal);
  if (trainIdx.length === 0) throw new Error('dataset: no training examples left after the validation split');
  return { all, valIdx, trainIdx };
}

/** The mixture with its rows encoded as inputs, the training rows the encoding kept, and the raw cells the weight expression reads. */
interface Encoded {
  all: SourceData;
  trainIdx: number[];
  encoding: ColumnEncoding | null;
  /** The raw rows with missing cells filled (numeric: the fitted fill; categorical: −1), for the weight expression. */
  raw: SourceData;
}

/**
 * Set-up: a table's categorical columns and missing cells turned into inputs by the spec's
 * `dataset.columns`, fitted on the training rows only (validation rows are encoded as the scorer
 * will encode test rows). A numeric, complete table passes as it is.
 */
function encodeColumns(ctx: SupervisedContext, all: SourceData, trainIdx: number[]): Encoded {
  const codings = ctx.data.columns;
  if (!codings) return { all, trainIdx, encoding: null, raw: all };
  const { spec, brief } = ctx;
  const names = brief.supervised!.features.map((f) => f.name);
  const info = brief.supervised!.target;
  const raw = rawColumns(all.x, names, codings);
  const trainRaw = raw.map((c) => ({ ...c, values: trainIdx.map((i) => c.values[i]) }) as typeof c);
  const trainY = trainIdx.map((i) => all.y[i]);
  const target =
    info.type === 'classification'
      ? { kind: 'classification' as const, y: trainY, classes: info.classes?.length ?? 0 }
      : { kind: 'regression' as const, y: trainY };
  const fit = fitColumns(trainRaw, target, spec.dataset.columns, mixSeed(spec.seed, 0xc01));
  if (fit.kept.length === 0) throw new Error('dataset.columns.missing "drop-row" leaves no training row: every one has a missing cell');
  const encoding: ColumnEncoding = { names, codings: [...codings], fitted: fit.state };
  const x = encodeRows(encoding, all.x);
  // Training rows take the out-of-fold encoding: a row's own target never enters its inputs.
  fit.kept.forEach((k, r) => (x[trainIdx[k]] = fit.x[r]));
  const fills = fit.state.columns.map((f) => (f.kind === 'numeric' ? f.fill : -1));
  const filled = all.x.map((row) => row.map((v, j) => (typeof v === 'number' && !Number.isNaN(v) ? v : fills[j])));
  return { all: { x, y: all.y }, trainIdx: fit.kept.map((k) => trainIdx[k]), encoding, raw: { x: filled, y: all.y } };
}

/** Set-up: per-example weights from the weight expression (raw features and the label), and their training mean. */
function exampleWeights(spec: JobSpec, features: string[], all: SourceData, trainIdx: number[]): { weights: number[]; wMean: number } {
  const weightExpr = spec.reward.weight ? compileExpression(spec.reward.weight, [...features, 'label'], { label: 'weight expression' }) : null;
  const weights = all.x.map((row, i) => {
    if (!weightExpr) return 1;
    const w = weightExpr.evaluate([...row, all.y[i]]);
    if (!Number.isFinite(w) || w < 0) throw new NaNError(`reward.weight "${spec.reward.weight}" gave ${w} (weights must be finite and >= 0) for example ${i}`);
    return w;
  });
  const wMean = trainIdx.reduce((a, i) => a + weights[i], 0) / trainIdx.length;
  if (!(wMean > 0)) throw new Error('reward.weight gives every training example weight 0');
  return { weights, wMean };
}

/** Set-up: the network with orthogonal initialisation from its own generator, room for `capacity` rows. */
function initNetwork(spec: JobSpec, sizes: number[], capacity: number): FusedMlp {
  const initRng = new Rng(mixSeed(spec.seed, 0x1417));
  const net = new FusedMlp(sizes, spec.model.activation, capacity);
  for (let l = 0; l + 1 < sizes.length; l++) {
    net.setLayer(l, orthogonal(sizes[l], sizes[l + 1], l + 2 === sizes.length ? 1 : Math.SQRT2, initRng), new Float32Array(sizes[l + 1]));
  }
  return net;
}

/** Set-up: the data split and weighted, the standardisation statistics (training rows only), the network. */
function setUp(ctx: SupervisedContext, cfg: SupervisedConfig): Supervised {
  const { spec, brief } = ctx;
  const info = brief.supervised;
  if (!info) throw new Error(`task ${brief.id} has no supervised description`);
  const classify = info.target.type === 'classification';
  const k = classify ? (info.target.classes?.length ?? 0) : 1;
  const features = info.features.map((f) => f.name);
  const rng = new Rng(mixSeed(spec.seed, 0xda7a));
  const drawn = splitData(ctx, rng);
  const { valIdx } = drawn;
  const { all, trainIdx, encoding, raw } = encodeColumns(ctx, drawn.all, drawn.trainIdx);
  const d = encoding ? encoding.fitted.features.length : features.length;
  const { weights, wMean } = exampleWeights(spec, features, raw, trainIdx);
  const inputNorm = spec.environment.standardize
    ? (() => {
        const cols = Array.from({ length: d }, (_, j) => meanStd(trainIdx.map((i) => all.x[i][j])));
        return { mean: cols.map((c) => c.mean), std: cols.map((c) => c.std) };
      })()
    : null;
  const targetNorm = classify ? null : meanStd(trainIdx.map((i) => all.y[i]));
  const batch = Math.min(cfg.batchSize, trainIdx.length);
  const nVal = valIdx.length;
  const net = initNetwork(spec, [d, ...spec.model.hidden, k], Math.max(batch, nVal));
  const s: Supervised = {
    ctx,
    cfg,
    spec,
    rng,
    classify,
    k,
    d,
    all,
    valIdx,
    trainIdx,
    weights,
    wMean,
    inputNorm,
    targetNorm,
    columns: encoding,
    net,
    batch,
    loss: supervisedLoss(spec.reward, k, net.outStride),
    val: null,
    wb: new Float32Array(batch),
    examples: 0,
    best: { loss: Infinity, metric: NaN, weights: null, epochsSince: 0 },
  };
  if (nVal) s.val = { x: prepX(s, valIdx), y: prepY(s, valIdx), w: new Float32Array(nVal).fill(1) };
  return s;
}

/** The inputs of rows `idx`, standardised when the spec asks. */
function prepX(s: Supervised, idx: ArrayLike<number>): Float32Array {
  return packInputs(s.all.x, idx, s.d, s.inputNorm);
}

/** The targets of rows `idx`: label-smoothed class rows [n × k], or standardised values [n]. */
function prepY(s: Supervised, idx: ArrayLike<number>): Float32Array {
  const t = s.targetNorm;
  return packTargets(
    s.all.y,
    idx,
    s.classify ? { classify: true, k: s.k, eps: s.spec.reward.labelSmoothing } : { classify: false, mean: t!.mean, std: t!.std },
  );
}

/** Every drawn row prepared once for the minibatch loop: inputs, targets and loss weights (over their training mean). */
function minibatchesOf(s: Supervised): Minibatches {
  const rows = Array.from({ length: s.all.x.length }, (_, i) => i);
  const w = Float32Array.from(s.weights, (v) => v / s.wMean);
  return new Minibatches(prepX(s, rows), prepY(s, rows), w, s.trainIdx, s.batch, s.d, s.classify ? s.k : 1);
}

/** The learning rate of an epoch: linear warm-up, then the schedule. */
function lrAt(cfg: SupervisedConfig, epoch: number): number {
  const lr0 = cfg.learningRate;
  if (epoch < cfg.warmupEpochs) return (lr0 * (epoch + 1)) / (cfg.warmupEpochs + 1);
  const p = (epoch - cfg.warmupEpochs) / Math.max(1, cfg.epochs - cfg.warmupEpochs);
  if (cfg.schedule === 'cosine') return lr0 * 0.5 * (1 + Math.cos(Math.PI * p));
  if (cfg.schedule === 'step') return lr0 * (p >= 0.75 ? 0.01 : p >= 0.5 ? 0.1 : 1);
  return lr0;
}

/** Evaluate phase: the loss and metric (accuracy or RMSE in the target's units) on the validation rows. */
function validate(s: Supervised): { loss: number; metric: number } | null {
  const { val, net, valIdx, all, k } = s;
  if (!val) return null;
  const nVal = valIdx.length;
  const os = net.outStride;
  net.input(nVal).set(val.x);
  const out = net.forward(nVal);
  const loss = lossOf(s.loss, { out, y: val.y, w: val.w, n: nVal, grad: null });
  let metric: number;
  if (s.classify) {
    let hits = 0;
    valIdx.forEach((i, r) => {
      let best = 0;
      for (let c = 1; c < k; c++) if (out[r * os + c] > out[r * os + best]) best = c;
      if (best === all.y[i]) hits += 1;
    });
    metric = hits / nVal;
  } else {
    const t = s.targetNorm!;
    metric = Math.sqrt(valIdx.reduce((a, i, r) => a + (out[r * os] * t.std + t.mean - all.y[i]) ** 2, 0) / nVal);
  }
  return { loss, metric };
}

/** Augmentation of the minibatch in place: Gaussian input noise, then mixup with partners from the same batch. */
function augment(s: Supervised, mb: Minibatches): void {
  const { rng, batch } = s;
  const { inputNoise, mixup } = s.spec.environment;
  const xb = mb.xb;
  if (inputNoise > 0) for (let q = 0; q < xb.length; q++) xb[q] += inputNoise * rng.normal();
  if (mixup > 0) {
    const lam = rng.beta(mixup, mixup);
    for (let r = 0; r < batch; r++) mb.partner[r] = rng.int(batch);
    mb.mix(lam);
  }
}

/** Draws the dropout masks of every hidden layer for one minibatch (kept units scaled by 1 / (1 − p)). */
function drawDropout(s: Supervised): void {
  const { net, batch, rng } = s;
  const p = s.spec.model.dropout;
  s.spec.model.hidden.forEach((h, l) => {
    const m = net.mask(l + 1, batch);
    const stride = net.width(l + 1);
    for (let r = 0; r < batch; r++) for (let j = 0; j < h; j++) m[r * stride + j] = rng.next() < p ? 0 : 1 / (1 - p);
  });
}

/** Update phase: one optimiser step on the training rows `mb.order[start … start + batch)`; returns the minibatch's loss. */
function trainStep(s: Supervised, mb: Minibatches, start: number, epoch: number, lr: number): number {
  const { cfg, net, batch, wb } = s;
  mb.gather(start, wb);
  augment(s, mb);
  const dropout = s.spec.model.dropout > 0;
  if (dropout) drawDropout(s);
  net.input(batch).set(mb.xb);
  const out = net.forward(batch, dropout);
  let loss = lossOf(s.loss, { out, y: mb.yb, w: wb, n: batch, grad: net.gradOutput(batch) });
  const l2 = cfg.weightDecay > 0 && cfg.optimizer !== 'adamw';
  if (l2) loss += net.l2Penalty(cfg.weightDecay);
  if (!Number.isFinite(Math.fround(loss))) {
    throw new NaNError(`training loss became ${Math.fround(loss)} in epoch ${epoch + 1} (algorithm.learningRate ${cfg.learningRate} may be too high)`);
  }
  net.backward(batch);
  if (l2) net.addL2(cfg.weightDecay);
  if (cfg.optimizer === 'sgd') net.sgd(lr, cfg.momentum);
  else net.adam({ lr, eps: TFJS_ADAM_EPS });
  if (cfg.optimizer === 'adamw' && cfg.weightDecay > 0) net.scaleWeights(1 - lr * cfg.weightDecay);
  return loss;
}

/** One epoch over the shuffled training rows; its mean loss, or null when the example budget ran out in it. */
function trainEpoch(s: Supervised, epoch: number, lr: number): number | null {
  const { ctx, batch } = s;
  s.minibatches ??= minibatchesOf(s);
  const mb = s.minibatches;
  mb.order.set(s.trainIdx);
  s.rng.shuffle(mb.order);
  let lossSum = 0;
  let steps = 0;
  for (let start = 0; start + batch <= mb.order.length; start += batch) {
    ctx.checkLimits();
    if (s.examples + batch > ctx.maxExamples) return null;
    lossSum += trainStep(s, mb, start, epoch, lr);
    steps += 1;
    s.examples += batch;
  }
  return lossSum / Math.max(1, steps);
}

/** Log phase after an epoch: losses, validation and the best weights; returns whether early stopping ends training. */
function endEpoch(s: Supervised, trainLoss: number, lr: number): boolean {
  const { ctx, cfg, examples } = s;
  ctx.checkLimits();
  ctx.log('losses/train_loss', examples, trainLoss);
  ctx.log('charts/learning_rate', examples, lr);
  const v = validate(s);
  if (v) {
    ctx.log('val/loss', examples, v.loss);
    ctx.log(metricName(s), examples, v.metric);
    if (v.loss < s.best.loss - 1e-6) s.best = { loss: v.loss, metric: v.metric, weights: Float32Array.from(s.net.params), epochsSince: 0 };
    else s.best.epochsSince += 1;
    if (cfg.earlyStoppingPatience > 0 && s.best.epochsSince >= cfg.earlyStoppingPatience) return true;
  }
  ctx.progress(examples);
  return false;
}

const metricName = (s: Supervised): string => (s.classify ? 'val/accuracy' : 'val/rmse');

/** The trained model file: the best weights when early stopping is on, checked finite. */
function modelFile(s: Supervised): ModelFile {
  const { net, ctx } = s;
  if (s.cfg.earlyStoppingPatience > 0 && s.best.weights) net.params.set(s.best.weights);
  const layers: DenseLayer[] = net.layers();
  for (const l of layers) if (!l.weights.every(Number.isFinite)) throw new NaNError('training produced non-finite weights');
  const info = ctx.brief.supervised!;
  return {
    format: MODEL_FORMAT,
    features: s.columns ? s.columns.fitted.features : info.features.map((f) => f.name),
    ...(s.columns ? { columns: s.columns } : {}),
    kind: info.target.type,
    classes: info.target.classes,
    activation: ctx.spec.model.activation,
    layers,
    inputNorm: s.inputNorm,
    targetNorm: s.targetNorm,
  };
}

/** Trains the model the spec describes; see the module comment. */
export async function trainSupervised(ctx: SupervisedContext, cfg: SupervisedConfig): Promise<SupervisedResult> {
  const s = setUp(ctx, cfg);
  let epoch = 0;
  let stopReason: SupervisedResult['stopReason'] = 'epochs';
  for (; epoch < cfg.epochs; epoch++) {
    const lr = lrAt(cfg, epoch);
    const trainLoss = trainEpoch(s, epoch, lr);
    if (trainLoss === null) {
      stopReason = 'budget';
      break;
    }
    if (endEpoch(s, trainLoss, lr)) {
      stopReason = 'early-stopping';
      epoch += 1;
      break;
    }
  }
  const model = modelFile(s);
  const final = validate(s);
  return { model, examples: s.examples, epochs: epoch, stopReason, validation: final ? { ...final, metricName: metricName(s) } : null };
}

/**
 * Supervised training of an MLP on the job's data mixture: standardisation, Gaussian input
 * noise and mixup as augmentation; cross-entropy (with label smoothing), focal, MSE or
 * Huber loss with an optional per-example weight expression; SGD with momentum, Adam or
 * AdamW with a constant, cosine or step schedule and warm-up; dropout; early stopping on
 * the validation loss. The engine counts the examples processed and stops at the cap; its
 * wall-clock and memory caps are checked at every minibatch.
 */
import type { TaskBrief } from '../../spec/brief.js';
import type { JobSpec, SupervisedConfig } from '../../spec/schema.js';
import { Rng, mixSeed } from '../../util/rng.js';
import { NaNError } from '../context.js';
import { compileExpression } from '../expr.js';
import { MODEL_FORMAT, type ModelFile } from '../model.js';
import type { DenseLayer } from '../policy.js';
import { tf, initTf } from '../tf.js';
import { orthogonal } from '../nets.js';

/** Rows of one source: raw features and labels (class index or value). */
export interface SourceData {
  x: number[][];
  y: number[];
}

/**
 * The data a job receives from the harness: for supervised jobs only the sources its spec
 * names; for control jobs the demonstration set it names, if any.
 */
export interface SupervisedData {
  sources: Record<string, SourceData>;
  demonstrations?: { obs: number[][]; actions: number[] };
}

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
    const order = src.x.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
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

/** Trains the model the spec describes; see the module comment. */
export async function trainSupervised(ctx: SupervisedContext, cfg: SupervisedConfig): Promise<SupervisedResult> {
  await initTf();
  const { spec, brief } = ctx;
  const info = brief.supervised;
  if (!info) throw new Error(`task ${brief.id} has no supervised description`);
  const classify = info.target.type === 'classification';
  const k = classify ? (info.target.classes?.length ?? 0) : 1;
  const features = info.features.map((f) => f.name);
  const d = features.length;
  const rng = new Rng(mixSeed(spec.seed, 0xda7a));

  // Mixture, shuffled, then the validation split.
  const all = drawMixture(spec, ctx.data, rng);
  const order = all.x.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const nVal = Math.floor(order.length * spec.dataset.validationFraction);
  const valIdx = order.slice(0, nVal);
  const trainIdx = order.slice(nVal);
  if (trainIdx.length === 0) throw new Error('dataset: no training examples left after the validation split');

  // Per-example weights from the weight expression (raw features and the label).
  const weightExpr = spec.reward.weight ? compileExpression(spec.reward.weight, [...features, 'label'], { label: 'weight expression' }) : null;
  const weights = all.x.map((row, i) => {
    if (!weightExpr) return 1;
    const w = weightExpr.evaluate([...row, all.y[i]]);
    if (!Number.isFinite(w) || w < 0) throw new NaNError(`reward.weight "${spec.reward.weight}" gave ${w} (weights must be finite and >= 0) for example ${i}`);
    return w;
  });
  const wMean = trainIdx.reduce((a, i) => a + weights[i], 0) / trainIdx.length;
  if (!(wMean > 0)) throw new Error('reward.weight gives every training example weight 0');

  // Standardisation statistics from the training part only.
  const inputNorm = spec.environment.standardize
    ? (() => {
        const cols = features.map((_, j) => meanStd(trainIdx.map((i) => all.x[i][j])));
        return { mean: cols.map((c) => c.mean), std: cols.map((c) => c.std) };
      })()
    : null;
  const targetNorm = classify ? null : meanStd(trainIdx.map((i) => all.y[i]));
  const prepX = (idx: number[]): Float32Array => {
    const out = new Float32Array(idx.length * d);
    idx.forEach((i, r) => {
      for (let j = 0; j < d; j++) out[r * d + j] = inputNorm ? (all.x[i][j] - inputNorm.mean[j]) / inputNorm.std[j] : all.x[i][j];
    });
    return out;
  };
  const prepY = (idx: number[]): Float32Array => {
    if (!classify) return Float32Array.from(idx, (i) => (all.y[i] - targetNorm!.mean) / targetNorm!.std);
    const out = new Float32Array(idx.length * k);
    const eps = spec.reward.labelSmoothing;
    idx.forEach((i, r) => {
      for (let c = 0; c < k; c++) out[r * k + c] = eps / k;
      out[r * k + all.y[i]] += 1 - eps;
    });
    return out;
  };

  // Model: orthogonal init, dropout masks drawn from the job's generator.
  const sizes = [d, ...spec.model.hidden, k];
  const initRng = new Rng(mixSeed(spec.seed, 0x1417));
  const W = sizes.slice(1).map((m, l) => {
    const init = orthogonal(sizes[l], m, l + 2 === sizes.length ? 1 : Math.SQRT2, initRng);
    return tf.tidy(() => tf.variable(tf.tensor2d(init, [sizes[l], m])));
  });
  const B = sizes.slice(1).map((m) => tf.tidy(() => tf.variable(tf.zeros([m]))));
  const vars = [...W, ...B];
  const act = (t: tf.Tensor): tf.Tensor => (spec.model.activation === 'tanh' ? tf.tanh(t) : tf.relu(t));
  const forward = (x: tf.Tensor2D, masks: tf.Tensor[] | null): tf.Tensor2D => {
    let h: tf.Tensor = x;
    for (let l = 0; l < W.length; l++) {
      h = tf.add(tf.matMul(h as tf.Tensor2D, W[l]), B[l]);
      if (l + 1 < W.length) {
        h = act(h);
        if (masks) h = tf.mul(h, masks[l]);
      }
    }
    return h as tf.Tensor2D;
  };
  const lossOf = (out: tf.Tensor2D, target: tf.Tensor, w: tf.Tensor1D): tf.Scalar => {
    let per: tf.Tensor;
    const obj = spec.reward.objective;
    if (obj === 'cross-entropy') per = tf.neg(tf.sum(tf.mul(target, tf.logSoftmax(out)), 1));
    else if (obj === 'focal') {
      const logp = tf.logSoftmax(out);
      per = tf.neg(tf.sum(tf.mul(tf.mul(target, tf.pow(tf.sub(1, tf.exp(logp)), spec.reward.focalGamma)), logp), 1));
    } else {
      const err = tf.sub(tf.reshape(out, [-1]), target);
      if (obj === 'mse') per = tf.square(err);
      else {
        // Huber without a branch: quadratic part up to delta, linear beyond.
        const a = tf.abs(err);
        const delta = spec.reward.huberDelta;
        const quad = tf.minimum(a, delta);
        per = tf.add(tf.mul(0.5, tf.square(quad)), tf.mul(delta, tf.sub(a, quad)));
      }
    }
    return tf.mean(tf.mul(per, w));
  };

  const lr0 = cfg.learningRate;
  const opt = cfg.optimizer === 'sgd' ? tf.train.momentum(lr0, cfg.momentum) : tf.train.adam(lr0);
  const setLr = (v: number): void => {
    (opt as unknown as { learningRate: number }).learningRate = v;
  };
  const lrAt = (epoch: number): number => {
    if (epoch < cfg.warmupEpochs) return (lr0 * (epoch + 1)) / (cfg.warmupEpochs + 1);
    const p = (epoch - cfg.warmupEpochs) / Math.max(1, cfg.epochs - cfg.warmupEpochs);
    if (cfg.schedule === 'cosine') return lr0 * 0.5 * (1 + Math.cos(Math.PI * p));
    if (cfg.schedule === 'step') return lr0 * (p >= 0.75 ? 0.01 : p >= 0.5 ? 0.1 : 1);
    return lr0;
  };

  const valX = nVal ? tf.tensor2d(prepX(valIdx), [nVal, d]) : null;
  const valY = nVal ? (classify ? tf.tensor2d(prepY(valIdx), [nVal, k]) : tf.tensor1d(prepY(valIdx))) : null;
  const valW = nVal ? tf.ones([nVal]) as tf.Tensor1D : null;
  const evaluate = (): { loss: number; metric: number } | null => {
    if (!valX || !valY || !valW) return null;
    return tf.tidy(() => {
      const out = forward(valX, null);
      const loss = lossOf(out, valY, valW).dataSync()[0];
      let metric: number;
      if (classify) {
        const pred = tf.argMax(out, 1).dataSync();
        metric = valIdx.reduce((a, i, r) => a + (pred[r] === all.y[i] ? 1 : 0), 0) / nVal;
      } else {
        const pred = out.dataSync();
        metric = Math.sqrt(valIdx.reduce((a, i, r) => a + (pred[r] * targetNorm!.std + targetNorm!.mean - all.y[i]) ** 2, 0) / nVal);
      }
      return { loss, metric };
    });
  };
  const metricName = classify ? 'val/accuracy' : 'val/rmse';

  let examples = 0;
  let epoch = 0;
  let stopReason: SupervisedResult['stopReason'] = 'epochs';
  let best = { loss: Infinity, metric: NaN, weights: null as number[][] | null, epochsSince: 0 };
  const batch = Math.min(cfg.batchSize, trainIdx.length);
  try {
    training: for (; epoch < cfg.epochs; epoch++) {
      setLr(lrAt(epoch));
      const perm = [...trainIdx];
      for (let i = perm.length - 1; i > 0; i--) {
        const j = rng.int(i + 1);
        [perm[i], perm[j]] = [perm[j], perm[i]];
      }
      let lossSum = 0;
      let steps = 0;
      for (let s = 0; s + batch <= perm.length; s += batch) {
        ctx.checkLimits();
        if (examples + batch > ctx.maxExamples) {
          stopReason = 'budget';
          break training;
        }
        const idx = perm.slice(s, s + batch);
        const xb = prepX(idx);
        const yb = prepY(idx);
        const wb = Float32Array.from(idx, (i) => weights[i] / wMean);
        if (spec.environment.inputNoise > 0) for (let q = 0; q < xb.length; q++) xb[q] += spec.environment.inputNoise * rng.normal();
        if (spec.environment.mixup > 0) {
          const lam = rng.beta(spec.environment.mixup, spec.environment.mixup);
          const partner = idx.map(() => rng.int(idx.length));
          const xm = Float32Array.from(xb);
          const ym = Float32Array.from(yb);
          const w = classify ? k : 1;
          partner.forEach((p, r) => {
            for (let j = 0; j < d; j++) xm[r * d + j] = lam * xb[r * d + j] + (1 - lam) * xb[p * d + j];
            for (let c = 0; c < w; c++) ym[r * w + c] = lam * yb[r * w + c] + (1 - lam) * yb[p * w + c];
          });
          xb.set(xm);
          yb.set(ym);
        }
        const masks = spec.model.dropout > 0
          ? spec.model.hidden.map((h) => Float32Array.from({ length: batch * h }, () => (rng.next() < spec.model.dropout ? 0 : 1 / (1 - spec.model.dropout))))
          : null;
        const lossT = tf.tidy(() => {
          const x = tf.tensor2d(xb, [batch, d]);
          const y = classify ? tf.tensor2d(yb, [batch, k]) : tf.tensor1d(yb);
          const w = tf.tensor1d(wb);
          const m = masks ? masks.map((mk, l) => tf.tensor2d(mk, [batch, spec.model.hidden[l]])) : null;
          const { value, grads } = tf.variableGrads(() => {
            let loss = lossOf(forward(x, m), y, w);
            if (cfg.weightDecay > 0 && cfg.optimizer !== 'adamw') loss = tf.add(loss, tf.mul(0.5 * cfg.weightDecay, tf.addN(W.map((v) => tf.sum(tf.square(v)))))) as tf.Scalar;
            return loss;
          }, vars);
          opt.applyGradients(vars.map((v) => ({ name: v.name, tensor: grads[v.name] })));
          if (cfg.optimizer === 'adamw' && cfg.weightDecay > 0) {
            const decay = 1 - (opt as unknown as { learningRate: number }).learningRate * cfg.weightDecay;
            for (const v of W) v.assign(tf.mul(v, decay));
          }
          return value;
        });
        const loss = lossT.dataSync()[0];
        lossT.dispose();
        if (!Number.isFinite(loss)) throw new NaNError(`training loss became ${loss} in epoch ${epoch + 1} (algorithm.learningRate ${cfg.learningRate} may be too high)`);
        lossSum += loss;
        steps += 1;
        examples += batch;
      }
      ctx.checkLimits();
      ctx.log('losses/train_loss', examples, lossSum / Math.max(1, steps));
      ctx.log('charts/learning_rate', examples, (opt as unknown as { learningRate: number }).learningRate);
      const v = evaluate();
      if (v) {
        ctx.log('val/loss', examples, v.loss);
        ctx.log(metricName, examples, v.metric);
        if (v.loss < best.loss - 1e-6) best = { loss: v.loss, metric: v.metric, weights: vars.map((x) => Array.from(x.dataSync())), epochsSince: 0 };
        else best.epochsSince += 1;
        if (cfg.earlyStoppingPatience > 0 && best.epochsSince >= cfg.earlyStoppingPatience) {
          stopReason = 'early-stopping';
          epoch += 1;
          break;
        }
      }
      ctx.progress(examples);
    }
    if (cfg.earlyStoppingPatience > 0 && best.weights) best.weights.forEach((w, i) => vars[i].assign(tf.tensor(w, vars[i].shape)));
    const layers: DenseLayer[] = W.map((w, l) => ({ in: sizes[l], out: sizes[l + 1], weights: Array.from(w.dataSync()), bias: Array.from(B[l].dataSync()) }));
    for (const l of layers) if (!l.weights.every(Number.isFinite)) throw new NaNError('training produced non-finite weights');
    const final = evaluate();
    return {
      model: {
        format: MODEL_FORMAT,
        features,
        kind: info.target.type,
        classes: info.target.classes,
        activation: spec.model.activation,
        layers,
        inputNorm,
        targetNorm,
      },
      examples,
      epochs: epoch,
      stopReason,
      validation: final ? { ...final, metricName } : null,
    };
  } finally {
    tf.dispose([...vars, ...(valX ? [valX] : []), ...(valY ? [valY] : []), ...(valW ? [valW] : [])]);
    opt.dispose();
  }
}

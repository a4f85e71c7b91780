/**
 * Supervised training of an MLP on the job's data mixture: standardisation, Gaussian input
 * noise and mixup as augmentation; cross-entropy (with label smoothing), focal, MSE or
 * Huber loss with an optional per-example weight expression; SGD with momentum, Adam or
 * AdamW with a constant, cosine or step schedule and warm-up; dropout; early stopping on
 * the validation loss. The engine counts the examples processed and stops at the cap; its
 * wall-clock and memory caps are checked at every minibatch. The network trains on the fused
 * engine (`../nn/mlp.ts`): each loss's gradient with respect to the outputs is written out here.
 */
import type { TaskBrief } from '../../spec/brief.js';
import type { JobSpec, SupervisedConfig } from '../../spec/schema.js';
import { Rng, mixSeed } from '../../util/rng.js';
import { NaNError } from '../errors.js';
import { compileExpression } from '../expr/expression.js';
import { MODEL_FORMAT, type ModelFile } from '../model.js';
import type { DenseLayer } from '../policy.js';
import { CategoricalHead } from '../nn/distributions.js';
import { orthogonal } from '../nn/init.js';
import { FusedMlp, TFJS_ADAM_EPS } from '../nn/mlp.js';
import type { SourceData, SupervisedData } from '../../spec/data.js';

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

/** Trains the model the spec describes; see the module comment. */
export async function trainSupervised(ctx: SupervisedContext, cfg: SupervisedConfig): Promise<SupervisedResult> {
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
  const order = rng.permutation(all.x.length);
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
  const batch = Math.min(cfg.batchSize, trainIdx.length);
  const net = new FusedMlp(sizes, spec.model.activation, Math.max(batch, nVal));
  for (let l = 0; l + 1 < sizes.length; l++) {
    net.setLayer(l, orthogonal(sizes[l], sizes[l + 1], l + 2 === sizes.length ? 1 : Math.SQRT2, initRng), new Float32Array(sizes[l + 1]));
  }
  const os = net.outStride;
  const obj = spec.reward.objective;
  const classes = new CategoricalHead(k);
  const aux = new Float64Array(k);

  /**
   * The weighted mean loss of the last forward pass over `n` rows against targets `y`
   * (soft class rows [n × k] or standardised values [n]) with weights `w`; when `grad` is
   * given, also ∂loss/∂output into it ([n × outStride]).
   */
  const lossOf = (out: Float32Array, y: Float32Array, w: ArrayLike<number>, n: number, grad: Float32Array | null): number => {
    let total = 0;
    for (let r = 0; r < n; r++) {
      const o = r * os;
      const scale = w[r] / n;
      if (obj === 'cross-entropy' || obj === 'focal') {
        const { logp, p: probs } = classes.set(out, o);
        let per = 0;
        if (obj === 'cross-entropy') {
          let ySum = 0;
          for (let c = 0; c < k; c++) {
            per -= y[r * k + c] * logp[c];
            ySum += y[r * k + c];
          }
          if (grad) for (let c = 0; c < k; c++) grad[o + c] = scale * (probs[c] * ySum - y[r * k + c]);
        } else {
          // per = −Σ y_c (1 − p_c)^γ log p_c; ∂per/∂z_j = −(y_j a_j − p_j Σ_c y_c a_c)
          // with a_c = (1 − p_c)^γ − γ (1 − p_c)^(γ−1) p_c log p_c.
          const gamma = spec.reward.focalGamma;
          let ya = 0;
          for (let c = 0; c < k; c++) {
            const q = 1 - probs[c];
            const qg = q ** gamma;
            per -= y[r * k + c] * qg * logp[c];
            const dq = gamma > 0 && q > 0 ? gamma * q ** (gamma - 1) : 0; // q = 0 means log p = 0
            aux[c] = qg - dq * probs[c] * logp[c];
            ya += y[r * k + c] * aux[c];
          }
          if (grad) for (let c = 0; c < k; c++) grad[o + c] = -scale * (y[r * k + c] * aux[c] - probs[c] * ya);
        }
        total += w[r] * per;
      } else {
        const err = out[o] - y[r];
        if (obj === 'mse') {
          total += w[r] * err * err;
          if (grad) grad[o] = scale * 2 * err;
        } else {
          // Huber: quadratic part up to delta, linear beyond.
          const delta = spec.reward.huberDelta;
          const a = Math.abs(err);
          const quad = Math.min(a, delta);
          total += w[r] * (0.5 * quad * quad + delta * (a - quad));
          if (grad) grad[o] = scale * Math.max(-delta, Math.min(delta, err));
        }
      }
    }
    return total / n;
  };

  const lr0 = cfg.learningRate;
  let lr = lr0;
  const lrAt = (epoch: number): number => {
    if (epoch < cfg.warmupEpochs) return (lr0 * (epoch + 1)) / (cfg.warmupEpochs + 1);
    const p = (epoch - cfg.warmupEpochs) / Math.max(1, cfg.epochs - cfg.warmupEpochs);
    if (cfg.schedule === 'cosine') return lr0 * 0.5 * (1 + Math.cos(Math.PI * p));
    if (cfg.schedule === 'step') return lr0 * (p >= 0.75 ? 0.01 : p >= 0.5 ? 0.1 : 1);
    return lr0;
  };

  const valX = nVal ? prepX(valIdx) : null;
  const valY = nVal ? prepY(valIdx) : null;
  const valW = nVal ? new Float32Array(nVal).fill(1) : null;
  const evaluate = (): { loss: number; metric: number } | null => {
    if (!valX || !valY || !valW) return null;
    net.input(nVal).set(valX);
    const out = net.forward(nVal);
    const loss = lossOf(out, valY, valW, nVal, null);
    let metric: number;
    if (classify) {
      let hits = 0;
      valIdx.forEach((i, r) => {
        let best = 0;
        for (let c = 1; c < k; c++) if (out[r * os + c] > out[r * os + best]) best = c;
        if (best === all.y[i]) hits += 1;
      });
      metric = hits / nVal;
    } else {
      metric = Math.sqrt(valIdx.reduce((a, i, r) => a + (out[r * os] * targetNorm!.std + targetNorm!.mean - all.y[i]) ** 2, 0) / nVal);
    }
    return { loss, metric };
  };
  const metricName = classify ? 'val/accuracy' : 'val/rmse';

  let examples = 0;
  let epoch = 0;
  let stopReason: SupervisedResult['stopReason'] = 'epochs';
  let best = { loss: Infinity, metric: NaN, weights: null as Float32Array | null, epochsSince: 0 };
  const wb = new Float32Array(batch);
  training: for (; epoch < cfg.epochs; epoch++) {
    lr = lrAt(epoch);
    const perm = rng.shuffle([...trainIdx]);
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
      for (let r = 0; r < batch; r++) wb[r] = weights[idx[r]] / wMean;
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
      const dropout = spec.model.dropout > 0;
      if (dropout) {
        spec.model.hidden.forEach((h, l) => {
          const m = net.mask(l + 1, batch);
          const stride = net.width(l + 1);
          for (let r = 0; r < batch; r++) for (let j = 0; j < h; j++) m[r * stride + j] = rng.next() < spec.model.dropout ? 0 : 1 / (1 - spec.model.dropout);
        });
      }
      net.input(batch).set(xb);
      const out = net.forward(batch, dropout);
      const g = net.gradOutput(batch);
      let loss = lossOf(out, yb, wb, batch, g);
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
      lossSum += loss;
      steps += 1;
      examples += batch;
    }
    ctx.checkLimits();
    ctx.log('losses/train_loss', examples, lossSum / Math.max(1, steps));
    ctx.log('charts/learning_rate', examples, lr);
    const v = evaluate();
    if (v) {
      ctx.log('val/loss', examples, v.loss);
      ctx.log(metricName, examples, v.metric);
      if (v.loss < best.loss - 1e-6) best = { loss: v.loss, metric: v.metric, weights: Float32Array.from(net.params), epochsSince: 0 };
      else best.epochsSince += 1;
      if (cfg.earlyStoppingPatience > 0 && best.epochsSince >= cfg.earlyStoppingPatience) {
        stopReason = 'early-stopping';
        epoch += 1;
        break;
      }
    }
    ctx.progress(examples);
  }
  if (cfg.earlyStoppingPatience > 0 && best.weights) net.params.set(best.weights);
  const layers: DenseLayer[] = net.layers();
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
}

/**
 * Augmented Random Search (Mania, Guy & Recht 2018), version V2-t: perturb the policy's
 * parameters along N random directions, run one episode with +ν·δ and one with −ν·δ
 * for each, keep the b best directions, and step along their return differences scaled
 * by the returns' standard deviation. States are normalised with running statistics
 * (the "V2" part). Gradient-free: on CartPole a linear policy is solved in a few
 * thousand env steps.
 */
import type { ArsConfig } from '../../spec/schema.js';
import { Rng, mixSeed } from '../../util/rng.js';
import type { AlgoResult, TrainContext } from '../context.js';
import { type DenseLayer, type PolicyFile, argmax, mlpForward, policyFile } from '../policy.js';

/** Layer shapes of the ARS policy; [] hidden widths give a linear policy (no bias). */
function layerShapes(sizes: number[]): { in: number; out: number; offset: number; biasOffset: number }[] {
  const shapes = [];
  let offset = 0;
  for (let l = 0; l + 1 < sizes.length; l++) {
    const wSize = sizes[l] * sizes[l + 1];
    shapes.push({ in: sizes[l], out: sizes[l + 1], offset, biasOffset: offset + wSize });
    offset += wSize + sizes[l + 1];
  }
  return shapes;
}

function toLayers(theta: Float64Array, sizes: number[]): DenseLayer[] {
  return layerShapes(sizes).map((s) => ({
    in: s.in,
    out: s.out,
    weights: Array.from(theta.subarray(s.offset, s.biasOffset)),
    bias: Array.from(theta.subarray(s.biasOffset, s.biasOffset + s.out)),
  }));
}

/** Trains a policy with ARS on one environment the engine builds (and counts). */
export async function trainArs(ctx: TrainContext, cfg: ArsConfig): Promise<AlgoResult> {
  const { spec, info } = ctx;
  if (info.actionSpace.type !== 'discrete') throw new Error(`ars here needs a discrete action space; ${info.id} has ${info.actionSpace.type}`);
  const nAct = info.actionSpace.n;
  const d = info.observationNames.length;
  const sizes = [d, ...spec.model.hidden, nAct];
  const shapes = layerShapes(sizes);
  const dim = shapes.reduce((a, s) => a + s.in * s.out + s.out, 0);
  const activation = spec.model.activation;
  const theta = new Float64Array(dim);
  // Hidden layers need a non-zero start to break symmetry; the output layer starts at 0 as in the paper.
  const initRng = new Rng(mixSeed(spec.seed, 1));
  for (let l = 0; l + 1 < shapes.length; l++) {
    const s = shapes[l];
    const scale = Math.sqrt(1 / s.in);
    for (let k = 0; k < s.in * s.out; k++) theta[s.offset + k] = initRng.normal() * scale;
  }
  const noiseRng = new Rng(mixSeed(spec.seed, 2));

  // One env; an episode ends with the autoreset that starts the next rollout. ARS V2 always
  // normalises states, with statistics updated once per iteration from every state visited.
  const env = ctx.makeEnv(1, { normalize: true, foldOnCommit: true });
  const action = new Int32Array(1);
  let updates = 0;
  let stopReason: AlgoResult['stopReason'] = 'budget';

  /** One episode with parameters `w`: shaped and canonical returns, or null when the budget ran out. */
  const rollout = (w: Float64Array): { shaped: number; canonical: number; length: number } | null => {
    const layers = shapes.map((s) => ({
      in: s.in,
      out: s.out,
      weights: w.subarray(s.offset, s.biasOffset),
      bias: w.subarray(s.biasOffset, s.biasOffset + s.out),
    }));
    let shaped = 0;
    for (;;) {
      if (!env.canStep()) return null;
      const out = mlpForward(layers, activation, env.observe(), 1);
      action[0] = argmax(out, 0, nAct);
      env.step(action);
      shaped += env.rewards[0];
      if (env.terminated[0] || env.truncated[0]) {
        const [episode] = env.drainEpisodes();
        return { shaped, canonical: episode.ret, length: episode.length };
      }
    }
  };

  const snapshot = (): PolicyFile => policyFile(info.actionSpace, d, activation, toLayers(theta, sizes), env.obsNorm());

  const plus = new Float64Array(dim);
  const minus = new Float64Array(dim);
  outer: while (env.canStep()) {
    const deltas: Float64Array[] = [];
    const rPlus: number[] = [];
    const rMinus: number[] = [];
    const canon: number[] = [];
    const lengths: number[] = [];
    for (let k = 0; k < cfg.directions; k++) {
      const delta = new Float64Array(dim);
      for (let i = 0; i < dim; i++) delta[i] = noiseRng.normal();
      for (let i = 0; i < dim; i++) {
        plus[i] = theta[i] + cfg.noise * delta[i];
        minus[i] = theta[i] - cfg.noise * delta[i];
      }
      const a = rollout(plus);
      const b = a && rollout(minus);
      if (!a || !b) break outer;
      deltas.push(delta);
      rPlus.push(a.shaped);
      rMinus.push(b.shaped);
      canon.push(a.canonical, b.canonical);
      lengths.push(a.length, b.length);
    }
    // Update the state statistics with every state visited in this iteration.
    env.commitObservations();
    const order = deltas.map((_, k) => k).sort((p, q) => Math.max(rPlus[q], rMinus[q]) - Math.max(rPlus[p], rMinus[p]));
    const top = order.slice(0, cfg.topDirections);
    const used = top.flatMap((k) => [rPlus[k], rMinus[k]]);
    const mean = used.reduce((a, v) => a + v, 0) / used.length;
    const sd = Math.sqrt(used.reduce((a, v) => a + (v - mean) ** 2, 0) / used.length);
    if (sd > 1e-8) {
      const scale = cfg.stepSize / (top.length * sd);
      for (const k of top) {
        const diff = rPlus[k] - rMinus[k];
        const delta = deltas[k];
        for (let i = 0; i < dim; i++) theta[i] += scale * diff * delta[i];
      }
    }
    updates += 1;
    ctx.log('charts/reward_std', env.used, sd);
    const reached = ctx.episodes(env.used, canon, lengths);
    ctx.progress(env.used, snapshot);
    if (reached) {
      stopReason = 'target-return';
      break;
    }
  }
  return { policy: snapshot(), updates, stopReason };
}

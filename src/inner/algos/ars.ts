/**
 * Augmented Random Search (Mania, Guy & Recht 2018), version V2-t: perturb the policy's
 * parameters along N random directions, run one episode with +ν·δ and one with −ν·δ
 * for each, keep the b best directions, and step along their return differences scaled
 * by the returns' standard deviation. States are normalised with running statistics
 * (the "V2" part). Gradient-free. Each iteration runs two phases, as PPO's loop does:
 *
 *   1. `explore`: for each direction one episode with +ν·δ and one with −ν·δ (`rollout`);
 *   2. `step`: the state statistics updated, θ stepped along the best directions.
 */
import type { ArsConfig } from '../../spec/schema.js';
import { Rng, mixSeed } from '../../util/rng.js';
import type { AlgoResult, TrainContext } from '../context.js';
import type { TrainingEnv } from '../envs/wrappers.js';
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

/** The policy's layers as plain arrays, for the policy file. */
function toLayers(theta: Float64Array, sizes: number[]): DenseLayer[] {
  return layerShapes(sizes).map((s) => ({
    in: s.in,
    out: s.out,
    weights: Array.from(theta.subarray(s.offset, s.biasOffset)),
    bias: Array.from(theta.subarray(s.biasOffset, s.biasOffset + s.out)),
  }));
}

/** Where one layer's weights and bias lie in the parameter vector. */
type LayerShape = ReturnType<typeof layerShapes>[number];

/** What the phases share: the parameters, their layout, the noise and the environment. */
interface Ars {
  ctx: TrainContext;
  cfg: ArsConfig;
  env: TrainingEnv;
  /** Layer sizes, their layout in θ and θ's length. */
  sizes: number[];
  shapes: LayerShape[];
  dim: number;
  nAct: number;
  theta: Float64Array;
  noiseRng: Rng;
  // Scratch: the perturbed parameters and one step's action.
  plus: Float64Array;
  minus: Float64Array;
  action: Int32Array;
}

/** One iteration's episodes: the directions, the shaped returns of ±ν·δ, and the canonical returns and lengths. */
interface Exploration {
  deltas: Float64Array[];
  rPlus: number[];
  rMinus: number[];
  canon: number[];
  lengths: number[];
}

/** Set-up: θ (hidden layers random, the output layer 0), the noise generator and one environment. */
function setUp(ctx: TrainContext, cfg: ArsConfig): Ars {
  const { spec, info } = ctx;
  if (info.actionSpace.type !== 'discrete') throw new Error(`ars here needs a discrete action space; ${info.id} has ${info.actionSpace.type}`);
  const nAct = info.actionSpace.n;
  const d = info.observationNames.length;
  const sizes = [d, ...spec.model.hidden, nAct];
  const shapes = layerShapes(sizes);
  const dim = shapes.reduce((a, s) => a + s.in * s.out + s.out, 0);
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
  const scratch = { plus: new Float64Array(dim), minus: new Float64Array(dim), action: new Int32Array(1) };
  return { ctx, cfg, env, sizes, shapes, dim, nAct, theta, noiseRng, ...scratch };
}

/** The policy file of the current θ. */
function snapshot(a: Ars): PolicyFile {
  const { info, spec } = a.ctx;
  return policyFile(info.actionSpace, a.sizes[0], spec.model.activation, toLayers(a.theta, a.sizes), a.env.obsNorm());
}

/** One episode with parameters `w`: shaped and canonical returns, or null when the budget ran out. */
function rollout(a: Ars, w: Float64Array): { shaped: number; canonical: number; length: number } | null {
  const { env, action } = a;
  const layers = a.shapes.map((s) => ({
    in: s.in,
    out: s.out,
    weights: w.subarray(s.offset, s.biasOffset),
    bias: w.subarray(s.biasOffset, s.biasOffset + s.out),
  }));
  let shaped = 0;
  for (;;) {
    if (!env.canStep()) return null;
    const out = mlpForward(layers, a.ctx.spec.model.activation, env.observe(), 1);
    action[0] = argmax(out, 0, a.nAct);
    env.step(action);
    shaped += env.rewards[0];
    if (env.terminated[0] || env.truncated[0]) {
      const [episode] = env.drainEpisodes();
      return { shaped, canonical: episode.ret, length: episode.length };
    }
  }
}

/** Phase 1: an episode with θ + ν·δ and one with θ − ν·δ for each random direction δ; null when the budget ran out. */
function explore(a: Ars): Exploration | null {
  const { cfg, dim, theta, plus, minus } = a;
  const e: Exploration = { deltas: [], rPlus: [], rMinus: [], canon: [], lengths: [] };
  for (let k = 0; k < cfg.directions; k++) {
    const delta = new Float64Array(dim);
    for (let i = 0; i < dim; i++) delta[i] = a.noiseRng.normal();
    for (let i = 0; i < dim; i++) {
      plus[i] = theta[i] + cfg.noise * delta[i];
      minus[i] = theta[i] - cfg.noise * delta[i];
    }
    const up = rollout(a, plus);
    const down = up && rollout(a, minus);
    if (!up || !down) return null;
    e.deltas.push(delta);
    e.rPlus.push(up.shaped);
    e.rMinus.push(down.shaped);
    e.canon.push(up.canonical, down.canonical);
    e.lengths.push(up.length, down.length);
  }
  return e;
}

/**
 * Phase 2: the state statistics take every state of the iteration; θ steps along the best
 * directions' return differences, scaled by their returns' standard deviation (returned).
 */
function step(a: Ars, e: Exploration): number {
  const { cfg, dim, theta } = a;
  const { rPlus, rMinus } = e;
  a.env.commitObservations();
  const order = e.deltas.map((_, k) => k).sort((p, q) => Math.max(rPlus[q], rMinus[q]) - Math.max(rPlus[p], rMinus[p]));
  const top = order.slice(0, cfg.topDirections);
  const used = top.flatMap((k) => [rPlus[k], rMinus[k]]);
  const mean = used.reduce((s, v) => s + v, 0) / used.length;
  const sd = Math.sqrt(used.reduce((s, v) => s + (v - mean) ** 2, 0) / used.length);
  if (sd > 1e-8) {
    const scale = cfg.stepSize / (top.length * sd);
    for (const k of top) {
      const diff = rPlus[k] - rMinus[k];
      const delta = e.deltas[k];
      for (let i = 0; i < dim; i++) theta[i] += scale * diff * delta[i];
    }
  }
  return sd;
}

/** Trains a policy with ARS on one environment the engine builds (and counts). */
export async function trainArs(ctx: TrainContext, cfg: ArsConfig): Promise<AlgoResult> {
  const a = setUp(ctx, cfg);
  const { env } = a;
  let updates = 0;
  let stopReason: AlgoResult['stopReason'] = 'budget';
  while (env.canStep()) {
    const e = explore(a);
    if (!e) break;
    const sd = step(a, e);
    updates += 1;
    ctx.log('charts/reward_std', env.used, sd);
    const reached = ctx.episodes(env.used, e.canon, e.lengths);
    ctx.progress(env.used, () => snapshot(a));
    if (reached) {
      stopReason = 'target-return';
      break;
    }
  }
  return { policy: snapshot(a), updates, stopReason };
}

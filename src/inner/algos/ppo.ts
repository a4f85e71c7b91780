/**
 * PPO (CleanRL's ppo.py and ppo_continuous_action.py, in one readable file): separate actor and
 * critic MLPs with orthogonal initialisation, GAE, clipped surrogate objective, value loss, entropy
 * bonus, per-minibatch advantage normalisation, global gradient clipping and a linearly annealed
 * Adam learning rate. Each update runs three phases, as CleanRL's loop does:
 *
 *   1. `collectRollout`: `rolloutSteps` vector steps with the current policy into the buffers;
 *   2. `computeAdvantages`: GAE(λ) advantages and the returns the critic regresses on;
 *   3. `updatePolicy`: `epochs` passes over the rollout in shuffled minibatches (`updateMinibatch`).
 *
 * Discrete and continuous actions differ only in the policy head (`../nn/distributions.ts`): a
 * categorical over logits, or a diagonal Gaussian over means with a learned, state-independent log
 * std. Acting and learning run on the fused engine (`../nn/mlp.ts`): the loss's gradient with
 * respect to the networks' outputs is written out here and by the head, and the engine
 * back-propagates it. A discrete policy can start from behaviour cloning on demonstrations.
 */
import type { PpoConfig } from '../../spec/schema.js';
import { type AlgoResult, type TrainContext, reportEpisodes } from '../context.js';
import type { TrainingEnv } from '../envs/wrappers.js';
import { NaNError } from '../errors.js';
import { type PolicyFile, assertFinitePolicy, policyFile } from '../policy.js';
import { type ActionSlots, CategoricalHead, DiagGaussianHead, type PolicyHead } from '../nn/distributions.js';
import { type FusedMlp, TFJS_ADAM_EPS } from '../nn/mlp.js';
import { initMlp } from '../nn/init.js';

/**
 * Behaviour-cloning warm start: fits the actor to the demonstrations' actions with
 * cross-entropy (Adam 1e-3, minibatches of 256) for `dataset.bcEpochs` epochs before RL.
 * Demonstrations are data, not experience: they do not count against the env-step budget, but
 * they join the observation statistics when the spec normalises observations.
 */
function behaviourClone(ctx: TrainContext, env: TrainingEnv, actor: FusedMlp, head: PolicyHead): void {
  const demos = ctx.demonstrations!;
  if (!(head instanceof CategoricalHead)) throw new Error('dataset.demonstrations: behaviour cloning needs a discrete action space');
  const d = actor.sizes[0];
  const n = demos.obs.length;
  if (n === 0) return;
  const flat = new Float64Array(n * d);
  demos.obs.forEach((o, i) => flat.set(o, i * d));
  env.foldObservations(flat, n);
  const x = env.normalizeInPlace(flat, n);
  const order = Array.from({ length: n }, (_, i) => i);
  const batch = Math.min(256, n);
  const os = actor.outStride;
  for (let epoch = 0; epoch < ctx.spec.dataset.bcEpochs; epoch++) {
    ctx.rng.shuffle(order);
    let sum = 0;
    let steps = 0;
    for (let s = 0; s + batch <= n; s += batch) {
      ctx.checkLimits();
      const xb = actor.input(batch);
      for (let k = 0; k < batch; k++) {
        const idx = order[s + k];
        for (let q = 0; q < d; q++) xb[k * d + q] = x[idx * d + q];
      }
      const out = actor.forward(batch);
      const g = actor.gradOutput(batch);
      let loss = 0;
      for (let k = 0; k < batch; k++) {
        const a = demos.actions[order[s + k]];
        loss -= head.set(out, k * os).logp[a];
        head.gradient(a, -1 / batch, 0, g, k * os); // ∂/∂logits of −log π(a)/batch
      }
      actor.backward(batch);
      actor.adam({ lr: 1e-3, eps: TFJS_ADAM_EPS });
      sum += loss / batch;
      steps += 1;
    }
    ctx.log('losses/bc_loss', 0, sum / Math.max(1, steps));
  }
  actor.resetAdam(); // PPO's optimiser starts fresh: the cloning's moments would bias its first steps.
}

/** What the three phases share: the networks, the head, the environments and the rollout buffers. */
interface Ppo {
  ctx: TrainContext;
  cfg: PpoConfig;
  env: TrainingEnv;
  actor: FusedMlp;
  critic: FusedMlp;
  head: PolicyHead;
  /** Observation size. */
  d: number;
  numEnvs: number;
  /** Vector steps per rollout. */
  steps: number;
  /** Rows per rollout (steps × numEnvs) and per minibatch. */
  batch: number;
  mbSize: number;
  // The rollout, one row per env step (row = step · numEnvs + env), as CleanRL's storage tensors.
  obs: Float32Array;
  actions: Float32Array;
  logprobs: Float32Array;
  rewards: Float64Array;
  /** 1 where the episode ended after this step. */
  dones: Uint8Array;
  values: Float64Array;
  advantages: Float32Array;
  returns: Float32Array;
  // Scratch.
  envActions: Float64Array;
  vNext: Float64Array;
  lastGae: Float64Array;
  perm: Int32Array;
  mbAdv: Float64Array;
}

/** Means of one update's minibatch statistics (what PPO logs). */
interface UpdateStats {
  policyLoss: number;
  valueLoss: number;
  entropy: number;
  approxKl: number;
  clipFrac: number;
}

/** The statistics' names, in the order they are logged. */
const STAT_KEYS = ['policyLoss', 'valueLoss', 'entropy', 'approxKl', 'clipFrac'] as const;

/** The critic's values of `rows` observation rows of `x`, into `into`. */
function criticValues(p: Ppo, x: Float64Array, rows: number, into: Float64Array): void {
  const cs = p.critic.outStride;
  p.critic.input(rows).set(x.subarray(0, rows * p.d));
  const v = p.critic.forward(rows);
  for (let i = 0; i < rows; i++) into[i] = v[i * cs];
}

/**
 * Phase 1: `steps` vector steps with the current policy, filling the rollout buffers. A time-limit
 * truncation bootstraps its reward with γ·V(final observation). Returns whether the finished
 * episodes reached the target return.
 */
function collectRollout(p: Ppo): boolean {
  const { ctx, cfg, env, actor, head, d, numEnvs } = p;
  const as = actor.outStride;
  const k = head.actionSize;
  head.begin();
  const slots: ActionSlots = { stored: p.actions, so: 0, env: p.envActions, eo: 0 };
  let reached = false;
  for (let s = 0; s < p.steps; s++) {
    const x = env.observe();
    actor.input(numEnvs).set(x.subarray(0, numEnvs * d));
    const out = actor.forward(numEnvs);
    criticValues(p, x, numEnvs, p.vNext);
    for (let i = 0; i < numEnvs; i++) {
      const row = s * numEnvs + i;
      for (let q = 0; q < d; q++) p.obs[row * d + q] = x[i * d + q];
      p.values[row] = p.vNext[i];
      slots.so = row * k;
      slots.eo = i * k;
      p.logprobs[row] = head.sample(out, i * as, ctx.rng, slots);
    }
    env.step(p.envActions, k);
    let anyTruncated = false;
    for (let i = 0; i < numEnvs; i++) if (env.truncated[i]) anyTruncated = true;
    if (anyTruncated) criticValues(p, env.finalObs(), numEnvs, p.vNext);
    for (let i = 0; i < numEnvs; i++) {
      const row = s * numEnvs + i;
      p.rewards[row] = env.rewards[i] + (env.truncated[i] ? cfg.gamma * p.vNext[i] : 0);
      p.dones[row] = env.terminated[i] || env.truncated[i] ? 1 : 0;
    }
    if (reportEpisodes(ctx, env)) reached = true;
  }
  return reached;
}

/** Phase 2: GAE(λ) over the rollout, bootstrapping from the value of the current observations. */
function computeAdvantages(p: Ppo): void {
  const { cfg, numEnvs, steps, vNext, lastGae, values } = p;
  criticValues(p, p.env.currentObs(), numEnvs, vNext);
  lastGae.fill(0);
  for (let s = steps - 1; s >= 0; s--) {
    for (let i = 0; i < numEnvs; i++) {
      const row = s * numEnvs + i;
      const nonTerminal = 1 - p.dones[row];
      const nextValue = s === steps - 1 ? vNext[i] : values[row + numEnvs];
      const delta = p.rewards[row] + cfg.gamma * nextValue * nonTerminal - values[row];
      lastGae[i] = delta + cfg.gamma * cfg.gaeLambda * nonTerminal * lastGae[i];
      p.advantages[row] = lastGae[i];
      p.returns[row] = lastGae[i] + values[row];
    }
  }
}

/** Normalises the first `n` values of `a` to mean 0 and (sample) standard deviation 1. */
function normalizeInPlace(a: Float64Array, n: number): void {
  let m = 0;
  for (let k = 0; k < n; k++) m += a[k];
  m /= n;
  let v = 0;
  for (let k = 0; k < n; k++) v += (a[k] - m) ** 2;
  const sd = Math.sqrt(v / (n - 1)) + 1e-8;
  for (let k = 0; k < n; k++) a[k] = (a[k] - m) / sd;
}

/**
 * One gradient step on the minibatch of rollout rows `perm[start … start + mbSize)`: the clipped
 * surrogate, the value loss and the entropy bonus, with the global gradient norm clipped. Returns
 * the minibatch's statistics (KL and clip fraction summed over its rows).
 */
function updateMinibatch(p: Ppo, start: number, lr: number, update: number): UpdateStats {
  const { cfg, actor, critic, head, d, perm, mbAdv } = p;
  const B = p.mbSize;
  const as = actor.outStride;
  const cs = critic.outStride;
  const k = head.actionSize;
  const ax = actor.input(B);
  const cx = critic.input(B);
  for (let r = 0; r < B; r++) {
    const idx = perm[start + r];
    for (let q = 0; q < d; q++) ax[r * d + q] = cx[r * d + q] = p.obs[idx * d + q];
    mbAdv[r] = p.advantages[idx];
  }
  if (cfg.normalizeAdvantages && B > 1) normalizeInPlace(mbAdv, B);
  head.begin(); // the head's own parameters move with every minibatch's step
  const out = actor.forward(B);
  const vOut = critic.forward(B);
  const gA = actor.gradOutput(B);
  const gC = critic.gradOutput(B);
  let pg = 0;
  let vl = 0;
  let ent = 0;
  let kl = 0;
  let cf = 0;
  for (let r = 0; r < B; r++) {
    const idx = perm[start + r];
    const logRatio = head.logProb(out, r * as, p.actions, idx * k) - p.logprobs[idx];
    const ratio = Math.exp(logRatio);
    const A = mbAdv[r];
    const clipped = Math.min(1 + cfg.clip, Math.max(1 - cfg.clip, ratio));
    pg -= Math.min(ratio * A, clipped * A);
    kl += ratio - 1 - logRatio;
    if (Math.abs(ratio - 1) > cfg.clip) cf += 1;
    ent += head.rowEntropy();
    // ∂loss/∂log π: the unclipped branch is taken when it is the smaller (ties too).
    const gLogp = ratio * A <= clipped * A ? (-A * ratio) / B : 0;
    head.backward(gLogp, -(cfg.entropyCoef / B), gA, r * as);
    const dv = vOut[r * cs] - p.returns[idx];
    vl += dv * dv;
    gC[r * cs] = (cfg.valueCoef * dv) / B;
  }
  pg /= B;
  vl = (0.5 * vl) / B;
  ent = head.entropy(ent, B);
  head.backwardEntropy(-cfg.entropyCoef);
  const loss = pg - cfg.entropyCoef * ent + cfg.valueCoef * vl;
  // Judged in single precision, as the networks compute: a loss past 3.4e38 has overflowed.
  const loss32 = Math.fround(loss);
  if (!Number.isFinite(loss32) || !Number.isFinite(Math.fround(vl))) {
    const bad = Number.isFinite(loss32) ? Math.fround(vl) : loss32;
    throw new NaNError(`ppo loss became ${bad} at update ${update + 1} (algorithm.learningRate ${cfg.learningRate} may be too high)`);
  }
  actor.backward(B);
  critic.backward(B);
  const norm = Math.sqrt(head.gradSumSq(actor.gradSumSq() + critic.gradSumSq()));
  const step = { lr, eps: 1e-5, gradScale: cfg.maxGradNorm / Math.max(norm, cfg.maxGradNorm) };
  actor.adam(step);
  critic.adam(step);
  head.step(step);
  return { policyLoss: pg, valueLoss: vl, entropy: ent, approxKl: kl / B, clipFrac: cf / B };
}

/** Phase 3: `epochs` passes over the rollout in shuffled minibatches; the statistics' means. */
function updatePolicy(p: Ppo, lr: number, update: number): UpdateStats {
  const sum: UpdateStats = { policyLoss: 0, valueLoss: 0, entropy: 0, approxKl: 0, clipFrac: 0 };
  let count = 0;
  for (let i = 0; i < p.batch; i++) p.perm[i] = i;
  for (let epoch = 0; epoch < p.cfg.epochs; epoch++) {
    p.ctx.rng.shuffle(p.perm);
    for (let start = 0; start + p.mbSize <= p.batch; start += p.mbSize) {
      p.ctx.checkLimits();
      const s = updateMinibatch(p, start, lr, update);
      for (const key of STAT_KEYS) sum[key] += s[key];
      count += 1;
    }
  }
  const n = Math.max(1, count);
  for (const key of STAT_KEYS) sum[key] /= n;
  return sum;
}

/** Trains a policy with PPO on the environments the engine builds (and counts). */
export async function trainPpo(ctx: TrainContext, cfg: PpoConfig): Promise<AlgoResult> {
  const { spec, info, rng } = ctx;
  const activation = spec.model.activation;
  const space = info.actionSpace;
  const head: PolicyHead =
    space.type === 'discrete' ? new CategoricalHead(space.n) : new DiagGaussianHead(space.shape[0], cfg.initLogStd, space.low, space.high);
  const numEnvs = spec.environment.numEnvs;
  const d = info.observationNames.length;

  const env = ctx.makeEnv(numEnvs);
  // CleanRL's plan: rollouts of `steps` per env, as many updates as the budget pays for.
  const steps = Math.min(cfg.rolloutSteps, Math.floor(env.cap / numEnvs));
  const batch = steps * numEnvs;
  const numUpdates = Math.max(1, Math.floor(env.cap / batch));
  const mbSize = Math.max(1, Math.floor(batch / cfg.minibatches));

  const capacity = Math.max(mbSize, numEnvs);
  const actor = initMlp([d, ...spec.model.hidden, head.outputs], activation, 0.01, rng, capacity);
  const critic = initMlp([d, ...spec.model.hidden, 1], activation, 1.0, rng, capacity);
  const p: Ppo = {
    ctx,
    cfg,
    env,
    actor,
    critic,
    head,
    d,
    numEnvs,
    steps,
    batch,
    mbSize,
    obs: new Float32Array(batch * d),
    actions: new Float32Array(batch * head.actionSize),
    logprobs: new Float32Array(batch),
    rewards: new Float64Array(batch),
    dones: new Uint8Array(batch),
    values: new Float64Array(batch),
    advantages: new Float32Array(batch),
    returns: new Float32Array(batch),
    envActions: new Float64Array(numEnvs * head.actionSize),
    vNext: new Float64Array(numEnvs),
    lastGae: new Float64Array(numEnvs),
    perm: new Int32Array(batch),
    mbAdv: new Float64Array(mbSize),
  };
  const snapshot = (): PolicyFile => policyFile(space, d, activation, actor.layers(), env.obsNorm());

  let lr = cfg.learningRate;
  let updates = 0;
  let stopReason: AlgoResult['stopReason'] = 'budget';
  const start = Date.now();
  if (ctx.demonstrations) behaviourClone(ctx, env, actor, head);
  for (let u = 0; u < numUpdates; u++) {
    if (cfg.annealLr) lr = cfg.learningRate * (1 - u / numUpdates);
    const reached = collectRollout(p);
    computeAdvantages(p);
    const stats = updatePolicy(p, lr, u);
    updates += 1;
    const step = env.used;
    ctx.log('losses/policy_loss', step, stats.policyLoss);
    ctx.log('losses/value_loss', step, stats.valueLoss);
    ctx.log('losses/entropy', step, stats.entropy);
    ctx.log('losses/approx_kl', step, stats.approxKl);
    ctx.log('losses/clipfrac', step, stats.clipFrac);
    ctx.log('charts/learning_rate', step, lr);
    ctx.log('charts/SPS', step, step / Math.max(1e-3, (Date.now() - start) / 1000));
    ctx.progress(step, snapshot);
    if (reached) {
      stopReason = 'target-return';
      break;
    }
  }
  const final = snapshot();
  assertFinitePolicy(final, 'ppo');
  return { policy: final, updates, stopReason };
}

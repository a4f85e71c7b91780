/**
 * DQN for discrete actions (CleanRL's dqn.py, in one readable file; Mnih et al. 2015):
 * a Q-network MLP and a target copy, a ring replay buffer of typed arrays, a linear
 * ε-greedy schedule over `explorationFraction` of the budget, and every `trainFrequency`
 * vector steps (once `learningStarts` env steps are collected) `gradientSteps` Adam steps
 * on the TD error against r + γ·max_a Q_target(s', a)·(1 − terminated), with a global
 * gradient-norm clip. The target network follows with a soft update (τ = 1: hard copy)
 * every `targetUpdateInterval` env steps.
 *
 * Choices worth knowing:
 * - The TD loss is the Huber loss (δ = 1: SB3's choice, the Nature paper's error
 *   clipping) rather than CleanRL's MSE: the training reward is an agent-written
 *   expression of any scale, and Huber bounds each sample's pull.
 * - Only termination zeroes the bootstrap; a time-limit truncation bootstraps from the
 *   final observation (VecEnv's `nextObs`, kept before the autoreset).
 * - The buffer stores raw observations; with the normalize-observation wrapper they are
 *   normalised with the current running statistics when sampled (as SB3's VecNormalize).
 * - The engine's wrappers shape the reward, keep the observation statistics and count every
 *   env step; the loop runs while the budget pays for another vector step.
 * - Acting and the gradient steps both run on the fused engine (`../nn/mlp.ts`); the Huber
 *   loss's gradient with respect to Q(s, a) is written out here and back-propagated there.
 * - The saved policy is the Q-network itself: its greedy argmax is the policy.
 * - `updates` counts gradient steps; losses, mean Q(s, a) and ε are logged (averaged) and
 *   progress is reported every 1000 env steps and at the end.
 *
 * The phases, as PPO's: `collectStep` (ε-greedy actions with `act`, one vector step into the
 * buffer), `trainQ` (the due gradient steps, each `gradientStep`), `updateTarget` and `flushLogs`.
 */
import type { DqnConfig } from '../../spec/schema.js';
import { type AlgoResult, type TrainContext, reportEpisodes } from '../context.js';
import { NaNError } from '../errors.js';
import { type PolicyFile, assertFinitePolicy, policyFile } from '../policy.js';
import { initMlp } from '../nn/init.js';
import { type FusedMlp, TFJS_ADAM_EPS } from '../nn/mlp.js';
import type { TrainingEnv } from '../envs/wrappers.js';

/** Env steps between curve points (losses, epsilon) and progress calls. */
const LOG_EVERY = 1000;

/** What a vector step gives the buffer: the observations it ended on, its rewards and termination flags. */
type VectorStep = Pick<TrainingEnv, 'nextObs' | 'rewards' | 'terminated'>;

/** Fixed-capacity ring buffer of transitions; the oldest is overwritten when full. */
class ReplayBuffer {
  readonly obs: Float32Array;
  readonly next: Float32Array;
  readonly act: Int32Array;
  readonly rew: Float32Array;
  readonly term: Uint8Array;
  pos = 0;
  size = 0;

  constructor(
    readonly capacity: number,
    readonly dim: number,
  ) {
    this.obs = new Float32Array(capacity * dim);
    this.next = new Float32Array(capacity * dim);
    this.act = new Int32Array(capacity);
    this.rew = new Float32Array(capacity);
    this.term = new Uint8Array(capacity);
  }

  /** Stores env `i`'s transition of the last vector step: row `i` of `obs` (before the step), its action and what the step gave. */
  add(obs: Float64Array, i: number, action: number, step: VectorStep): void {
    const d = this.dim;
    const next = step.nextObs;
    for (let k = 0; k < d; k++) {
      this.obs[this.pos * d + k] = obs[i * d + k];
      this.next[this.pos * d + k] = next[i * d + k];
    }
    this.act[this.pos] = action;
    this.rew[this.pos] = step.rewards[i];
    this.term[this.pos] = step.terminated[i];
    this.pos = (this.pos + 1) % this.capacity;
    this.size = Math.min(this.size + 1, this.capacity);
  }
}

/** What the phases share: the Q-network and its target, the buffer, the environments and the logged statistics. */
interface Dqn {
  ctx: TrainContext;
  cfg: DqnConfig;
  env: TrainingEnv;
  qNet: FusedMlp;
  target: FusedMlp;
  buffer: ReplayBuffer;
  /** Observation size and action count. */
  d: number;
  nAct: number;
  numEnvs: number;
  /** Env steps over which ε falls from its initial to its final value. */
  explorationSteps: number;
  // Scratch: one vector step's actions and observations, one sampled batch.
  actions: Int32Array;
  obsBefore: Float64Array;
  bAct: Int32Array;
  bRew: Float32Array;
  bNotTerm: Float32Array;
  vecSteps: number;
  updates: number;
  /** Sums of the losses and mean Q values since the last log, and their count. */
  lossSum: number;
  qSum: number;
  statCount: number;
  nextLog: number;
  lastFlush: number;
  /** Wall-clock start, for steps per second. */
  start: number;
}

/** Set-up: the environments, the Q-network with its target copy and the replay buffer. */
function setUp(ctx: TrainContext, cfg: DqnConfig): Dqn {
  const { spec, info, rng } = ctx;
  const activation = spec.model.activation;
  if (info.actionSpace.type !== 'discrete') throw new Error(`dqn needs a discrete action space; ${info.id} has ${info.actionSpace.type}`);
  const nAct = info.actionSpace.n;
  const numEnvs = spec.environment.numEnvs;
  const d = info.observationNames.length;
  const B = cfg.batchSize;
  const env = ctx.makeEnv(numEnvs);
  const capacity = Math.max(B, numEnvs);
  const qNet = initMlp([d, ...spec.model.hidden, nAct], activation, 1, rng, capacity);
  const target = initMlp([d, ...spec.model.hidden, nAct], activation, 1, rng, capacity);
  target.copyFrom(qNet);
  return {
    ctx,
    cfg,
    env,
    qNet,
    target,
    buffer: new ReplayBuffer(cfg.bufferSize, d),
    d,
    nAct,
    numEnvs,
    explorationSteps: cfg.explorationFraction * env.cap,
    actions: new Int32Array(numEnvs),
    obsBefore: new Float64Array(numEnvs * d),
    bAct: new Int32Array(B),
    bRew: new Float32Array(B),
    bNotTerm: new Float32Array(B),
    vecSteps: 0,
    updates: 0,
    lossSum: 0,
    qSum: 0,
    statCount: 0,
    nextLog: LOG_EVERY,
    lastFlush: -1,
    start: Date.now(),
  };
}

/** ε at an env step: linear from the initial to the final value over the exploration steps. */
function epsilonAt(p: Dqn, step: number): number {
  const { explorationFinal, explorationInitial } = p.cfg;
  return Math.max(explorationFinal, explorationInitial + ((explorationFinal - explorationInitial) * step) / p.explorationSteps);
}

/** The policy file of the current Q-network. */
function snapshot(p: Dqn): PolicyFile {
  const { info, spec } = p.ctx;
  return policyFile(info.actionSpace, p.d, spec.model.activation, p.qNet.layers(), p.env.obsNorm());
}

/** ε-greedy actions for every env into `p.actions`: one uniform draw each, a second one when exploring. */
function act(p: Dqn): void {
  const { ctx, env, qNet, d, nAct, numEnvs, actions } = p;
  const { rng } = ctx;
  const os = qNet.outStride;
  const epsilon = epsilonAt(p, env.used);
  const x = env.observe();
  let q: Float32Array | null = null;
  for (let i = 0; i < numEnvs; i++) {
    if (rng.next() < epsilon) {
      actions[i] = rng.int(nAct);
    } else {
      if (!q) {
        qNet.input(numEnvs).set(x.subarray(0, numEnvs * d));
        q = qNet.forward(numEnvs);
      }
      let best = 0;
      for (let j = 1; j < nAct; j++) if (q[i * os + j] > q[i * os + best]) best = j;
      actions[i] = best;
    }
  }
}

/** Collect phase: one ε-greedy vector step into the buffer; returns whether the finished episodes reached the target return. */
function collectStep(p: Dqn): boolean {
  const { ctx, env, numEnvs, actions } = p;
  act(p);
  p.obsBefore.set(env.obs.subarray(0, numEnvs * p.d)); // raw: the buffer normalises when it samples
  env.step(actions);
  p.vecSteps += 1;
  for (let i = 0; i < numEnvs; i++) p.buffer.add(p.obsBefore, i, actions[i], env);
  return reportEpisodes(ctx, env);
}

/** Draws a uniform batch from the buffer into the networks' inputs (normalised) and the batch scratch. */
function sampleBatch(p: Dqn): void {
  const { buffer, d, bAct, bRew, bNotTerm, env } = p;
  const B = p.cfg.batchSize;
  const bObs = p.qNet.input(B);
  const bNext = p.target.input(B);
  for (let k = 0; k < B; k++) {
    const j = p.ctx.rng.int(buffer.size);
    bObs.set(buffer.obs.subarray(j * d, j * d + d), k * d);
    bNext.set(buffer.next.subarray(j * d, j * d + d), k * d);
    bAct[k] = buffer.act[j];
    bRew[k] = buffer.rew[j];
    bNotTerm[k] = 1 - buffer.term[j];
  }
  env.normalizeInPlace(bObs, B);
  env.normalizeInPlace(bNext, B);
}

/** One Adam step on a fresh uniform sample of the buffer; returns [loss, mean Q(s, a)]. */
function gradientStep(p: Dqn): [number, number] {
  const { cfg, qNet, target, nAct, bAct, bRew, bNotTerm } = p;
  const B = cfg.batchSize;
  const os = qNet.outStride;
  sampleBatch(p);
  const qNext = target.forward(B);
  const q = qNet.forward(B);
  const g = qNet.gradOutput(B);
  let loss = 0;
  let qMean = 0;
  for (let k = 0; k < B; k++) {
    let maxNext = -Infinity;
    for (let j = 0; j < nAct; j++) maxNext = Math.max(maxNext, qNext[k * os + j]);
    const y = bRew[k] + cfg.gamma * maxNext * bNotTerm[k];
    const qa = q[k * os + bAct[k]];
    qMean += qa;
    // Huber loss with δ = 1: quadratic within ±1, linear outside.
    const err = qa - y;
    const a = Math.abs(err);
    loss += a <= 1 ? 0.5 * a * a : a - 0.5;
    g[k * os + bAct[k]] = Math.max(-1, Math.min(1, err)) / B;
  }
  qNet.backward(B);
  const norm = Math.sqrt(qNet.gradSumSq());
  qNet.adam({ lr: cfg.learningRate, eps: TFJS_ADAM_EPS, gradScale: cfg.maxGradNorm / Math.max(norm, cfg.maxGradNorm) });
  return [loss / B, qMean / B];
}

/** Update phase: `gradientSteps` gradient steps, their statistics summed for the log. */
function trainQ(p: Dqn, envSteps: number): void {
  const { ctx, cfg } = p;
  for (let g = 0; g < cfg.gradientSteps; g++) {
    ctx.checkLimits();
    const [loss, qv] = gradientStep(p);
    p.updates += 1;
    if (!Number.isFinite(Math.fround(loss))) {
      const why = `(env step ${envSteps}; algorithm.learningRate ${cfg.learningRate} may be too high)`;
      throw new NaNError(`dqn TD loss became ${Math.fround(loss)} at gradient step ${p.updates} ${why}`);
    }
    p.lossSum += loss;
    p.qSum += qv;
    p.statCount += 1;
  }
}

/** Target phase: the target network follows whenever the env-step counter crosses a multiple of the interval. */
function updateTarget(p: Dqn, envSteps: number): void {
  const { cfg } = p;
  if (Math.floor(envSteps / cfg.targetUpdateInterval) > Math.floor((envSteps - p.numEnvs) / cfg.targetUpdateInterval)) {
    p.target.copyFrom(p.qNet, cfg.tau);
  }
}

/** Log phase: the averaged statistics since the last log, ε and progress (once per env step). */
function flushLogs(p: Dqn): void {
  const { ctx, env } = p;
  const step = env.used;
  if (p.lastFlush === step) return;
  p.lastFlush = step;
  if (p.statCount > 0) {
    ctx.log('losses/td_loss', step, p.lossSum / p.statCount);
    ctx.log('losses/q_values', step, p.qSum / p.statCount);
  }
  ctx.log('charts/epsilon', step, epsilonAt(p, step));
  ctx.log('charts/SPS', step, step / Math.max(1e-3, (Date.now() - p.start) / 1000));
  p.lossSum = p.qSum = p.statCount = 0;
  ctx.progress(step, () => snapshot(p));
}

/** Trains a Q-network with DQN on the environments the engine builds (and counts); the greedy policy is saved. */
export async function trainDqn(ctx: TrainContext, cfg: DqnConfig): Promise<AlgoResult> {
  const p = setUp(ctx, cfg);
  let stopReason: AlgoResult['stopReason'] = 'budget';
  while (p.env.canStep()) {
    if (collectStep(p)) {
      // Stop at once: the saved Q-network is the one that acted (ε-greedily) in the episodes that reached the target.
      stopReason = 'target-return';
      break;
    }
    const envSteps = p.env.used;
    if (envSteps > cfg.learningStarts && p.vecSteps % cfg.trainFrequency === 0) trainQ(p, envSteps);
    updateTarget(p, envSteps);
    if (envSteps >= p.nextLog) {
      flushLogs(p);
      while (p.nextLog <= envSteps) p.nextLog += LOG_EVERY;
    }
  }
  flushLogs(p);
  const final = snapshot(p);
  assertFinitePolicy(final, 'dqn');
  return { policy: final, updates: p.updates, stopReason };
}

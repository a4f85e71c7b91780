/**
 * REINFORCE with a learned value baseline (Williams 1992; Sutton & Barto §13.4), for
 * discrete actions, in one readable file: a categorical policy MLP samples complete
 * episodes; each update takes the discounted returns-to-go G_t of at least
 * `episodesPerUpdate` finished episodes, advantages A_t = G_t − V(s_t) (normalised over
 * the update when asked), one Adam step on −mean(log π(a_t|s_t)·A_t) − entropyCoef·entropy
 * and one Adam step (its own learning rate) on the value MSE mean((V(s_t) − G_t)²).
 *
 * Choices worth knowing:
 * - Environments run as a vector; an episode joins the update in which it finishes, so
 *   with several envs an episode still running at an update continues under the new
 *   policy (every finished episode is used exactly once, none is dropped for being long).
 * - An episode cut by the time limit (truncation) bootstraps its return with
 *   γ·V(final observation), as PPO does; termination ends the return with 0.
 * - When the budget runs out, unfinished episodes are dropped and the finished ones (if
 *   any) make one last update. When `ctx.episodes` reports the target return, training
 *   stops at once with the policy that reached it.
 * - Acting and the gradient steps run on the fused engine (`../nn/mlp.ts`); the losses'
 *   gradients with respect to the logits and values are written out here. Networks use
 *   orthogonal initialisation (policy output gain 0.01, value output gain 1), as in PPO.
 *
 * The phases, as PPO's: `collectStep` (one vector step, closing finished episodes with
 * `finishEpisode`), then, once enough episodes are in, `update`: `loadBatch`, `computeAdvantages`,
 * `writeGradients` and `applyUpdate`.
 */
import type { ReinforceConfig } from '../../spec/schema.js';
import { type AlgoResult, type TrainContext, reportEpisodes } from '../context.js';
import { NaNError } from '../errors.js';
import { type PolicyFile, assertFinitePolicy, policyFile } from '../policy.js';
import { CategoricalHead } from '../nn/distributions.js';
import { initMlp } from '../nn/init.js';
import { type FusedMlp, TFJS_ADAM_EPS } from '../nn/mlp.js';
import type { TrainingEnv } from '../envs/wrappers.js';

/** One finished episode: the (normalised) observations it acted on, its actions and returns-to-go. */
interface Episode {
  obs: number[];
  actions: number[];
  returns: Float64Array;
}

/** The episode an env is in the middle of: observations, actions, shaped rewards. */
interface RunningEpisode {
  obs: number[];
  actions: number[];
  rewards: number[];
}

/** What the phases share: the networks, the head, the environments and the episodes in hand. */
interface Reinforce {
  ctx: TrainContext;
  cfg: ReinforceConfig;
  env: TrainingEnv;
  actor: FusedMlp;
  critic: FusedMlp;
  pi: CategoricalHead;
  /** Observation size. */
  d: number;
  numEnvs: number;
  /** Scratch: the actions of one vector step. */
  actions: Int32Array;
  running: RunningEpisode[];
  /** The finished episodes the next update learns from. */
  batch: Episode[];
  updates: number;
  /** Wall-clock start, for steps per second. */
  start: number;
}

/** One update's rows: the actions taken and the returns-to-go (the observations are in the networks' inputs). */
interface UpdateRows {
  n: number;
  actions: Int32Array;
  returns: Float32Array;
}

/** One update's mean losses. */
interface UpdateLosses {
  policyLoss: number;
  valueLoss: number;
  entropy: number;
}

/** Set-up: the environments, the policy and value networks, empty episodes. */
function setUp(ctx: TrainContext, cfg: ReinforceConfig): Reinforce {
  const { spec, info, rng } = ctx;
  const activation = spec.model.activation;
  if (info.actionSpace.type !== 'discrete') throw new Error(`reinforce needs a discrete action space; ${info.id} has ${info.actionSpace.type}`);
  const nAct = info.actionSpace.n;
  const numEnvs = spec.environment.numEnvs;
  const d = info.observationNames.length;
  const env = ctx.makeEnv(numEnvs);
  const actor = initMlp([d, ...spec.model.hidden, nAct], activation, 0.01, rng, numEnvs);
  const critic = initMlp([d, ...spec.model.hidden, 1], activation, 1.0, rng, numEnvs);
  const running = Array.from({ length: numEnvs }, () => ({ obs: [] as number[], actions: [] as number[], rewards: [] as number[] }));
  const pi = new CategoricalHead(nAct);
  return { ctx, cfg, env, actor, critic, pi, d, numEnvs, actions: new Int32Array(numEnvs), running, batch: [], updates: 0, start: Date.now() };
}

/** The policy file of the current actor. */
function snapshot(p: Reinforce): PolicyFile {
  const { info, spec } = p.ctx;
  return policyFile(info.actionSpace, p.d, spec.model.activation, p.actor.layers(), p.env.obsNorm());
}

/** Closes env i's running episode into the batch: returns-to-go, bootstrapped with γ·V(s_T) on truncation. */
function finishEpisode(p: Reinforce, i: number, bootstrap: number): void {
  const ep = p.running[i];
  const T = ep.rewards.length;
  const returns = new Float64Array(T);
  let g = bootstrap;
  for (let t = T - 1; t >= 0; t--) {
    g = ep.rewards[t] + p.cfg.gamma * g;
    returns[t] = g;
  }
  p.batch.push({ obs: ep.obs, actions: ep.actions, returns });
  p.running[i] = { obs: [], actions: [], rewards: [] };
}

/** Collect phase: one vector step with the current policy; returns whether the finished episodes reached the target return. */
function collectStep(p: Reinforce): boolean {
  const { ctx, env, actor, critic, pi, d, numEnvs, actions, running } = p;
  const as = actor.outStride;
  const cs = critic.outStride;
  const x = env.observe();
  actor.input(numEnvs).set(x.subarray(0, numEnvs * d));
  const logits = actor.forward(numEnvs);
  for (let i = 0; i < numEnvs; i++) {
    actions[i] = pi.draw(logits, i * as, ctx.rng);
    for (let k = 0; k < d; k++) running[i].obs.push(x[i * d + k]);
    running[i].actions.push(actions[i]);
  }
  env.step(actions);
  let vFinal: Float32Array | null = null;
  for (let i = 0; i < numEnvs; i++) {
    running[i].rewards.push(env.rewards[i]);
    if (env.terminated[i]) finishEpisode(p, i, 0);
    else if (env.truncated[i]) {
      if (!vFinal) {
        critic.input(numEnvs).set(env.finalObs().subarray(0, numEnvs * d));
        vFinal = critic.forward(numEnvs);
      }
      finishEpisode(p, i, vFinal[i * cs]);
    }
  }
  return reportEpisodes(ctx, env);
}

/** Update, step 1: the batch's episodes into the networks' inputs, their actions and returns. */
function loadBatch(p: Reinforce): UpdateRows {
  const { actor, critic, d } = p;
  const n = p.batch.reduce((a, e) => a + e.actions.length, 0);
  const ax = actor.input(n);
  const cx = critic.input(n);
  const actions = new Int32Array(n);
  const returns = new Float32Array(n); // single precision, as the networks: a return past 3.4e38 is infinite
  let row = 0;
  for (const e of p.batch) {
    ax.set(e.obs, row * d);
    actions.set(e.actions, row);
    returns.set(e.returns, row);
    row += e.actions.length;
  }
  cx.set(ax);
  return { n, actions, returns };
}

/** Update, step 2: advantages against the value baseline (a constant for the policy step), normalised when asked. */
function computeAdvantages(p: Reinforce, rows: UpdateRows, vOut: Float32Array): Float64Array {
  const { n } = rows;
  const cs = p.critic.outStride;
  const adv = new Float64Array(n);
  for (let k = 0; k < n; k++) adv[k] = rows.returns[k] - vOut[k * cs];
  if (p.cfg.normalizeAdvantages && n > 1) {
    let mean = 0;
    for (let k = 0; k < n; k++) mean += adv[k];
    mean /= n;
    let variance = 0;
    for (let k = 0; k < n; k++) variance += (adv[k] - mean) ** 2;
    const sd = Math.sqrt(variance / n) + 1e-8;
    for (let k = 0; k < n; k++) adv[k] = (adv[k] - mean) / sd;
  }
  return adv;
}

/** Update, step 3: the losses and their gradients with respect to the logits and the values. */
function writeGradients(p: Reinforce, rows: UpdateRows, outputs: { logits: Float32Array; vOut: Float32Array; adv: Float64Array }): UpdateLosses {
  const { actor, critic, pi, cfg } = p;
  const { n } = rows;
  const { logits, vOut, adv } = outputs;
  const as = actor.outStride;
  const cs = critic.outStride;
  const gA = actor.gradOutput(n);
  const gC = critic.gradOutput(n);
  let pgLoss = 0;
  let entropy = 0;
  let vLoss = 0;
  for (let k = 0; k < n; k++) {
    const o = k * as;
    const a = rows.actions[k];
    pi.set(logits, o);
    pgLoss -= pi.logp[a] * adv[k];
    entropy += pi.h;
    // ∂/∂logits of −logπ(a)·A/n − c·H/n.
    pi.gradient(a, -adv[k] / n, -cfg.entropyCoef / n, gA, o);
    const dv = vOut[k * cs] - rows.returns[k];
    vLoss += dv * dv;
    gC[k * cs] = (2 * dv) / n;
  }
  return { policyLoss: pgLoss / n, entropy: entropy / n, valueLoss: vLoss / n };
}

/** Update, step 4: one Adam step of each network when the losses are finite; the losses logged, the batch emptied. */
function applyUpdate(p: Reinforce, losses: UpdateLosses, n: number): void {
  const { ctx, cfg, actor, critic, env } = p;
  const loss = losses.policyLoss - cfg.entropyCoef * losses.entropy;
  const finite = Number.isFinite(Math.fround(loss)) && Number.isFinite(Math.fround(losses.valueLoss)); // single precision, as the networks
  if (finite) {
    actor.backward(n);
    critic.backward(n);
    actor.adam({ lr: cfg.learningRate, eps: TFJS_ADAM_EPS });
    critic.adam({ lr: cfg.valueLearningRate, eps: TFJS_ADAM_EPS });
  }
  p.updates += 1;
  if (!finite) {
    const which = Number.isFinite(Math.fround(loss)) ? `value loss became ${Math.fround(losses.valueLoss)}` : `loss became ${Math.fround(loss)}`;
    const rates = `algorithm.learningRate ${cfg.learningRate} / valueLearningRate ${cfg.valueLearningRate}`;
    throw new NaNError(`reinforce ${which} at update ${p.updates} (${rates} may be too high)`);
  }
  const step = env.used;
  ctx.log('losses/policy_loss', step, losses.policyLoss);
  ctx.log('losses/value_loss', step, losses.valueLoss);
  ctx.log('losses/entropy', step, losses.entropy);
  ctx.log('charts/SPS', step, step / Math.max(1e-3, (Date.now() - p.start) / 1000));
  p.batch = [];
  ctx.progress(step, () => snapshot(p));
}

/** Update phase: one policy step and one value step on the finished episodes in the batch. */
function update(p: Reinforce): void {
  p.ctx.checkLimits();
  const rows = loadBatch(p);
  const vOut = p.critic.forward(rows.n);
  const logits = p.actor.forward(rows.n);
  const adv = computeAdvantages(p, rows, vOut);
  applyUpdate(p, writeGradients(p, rows, { logits, vOut, adv }), rows.n);
}

/** Trains a categorical policy with REINFORCE and a value baseline on the environments the engine builds (and counts). */
export async function trainReinforce(ctx: TrainContext, cfg: ReinforceConfig): Promise<AlgoResult> {
  const p = setUp(ctx, cfg);
  let stopReason: AlgoResult['stopReason'] = 'budget';
  for (;;) {
    if (!p.env.canStep()) {
      // Budget spent: unfinished episodes are dropped, finished ones make a last update.
      if (p.batch.length > 0) update(p);
      break;
    }
    if (collectStep(p)) {
      stopReason = 'target-return';
      break;
    }
    if (p.batch.length >= cfg.episodesPerUpdate) update(p);
  }
  const final = snapshot(p);
  assertFinitePolicy(final, 'reinforce');
  return { policy: final, updates: p.updates, stopReason };
}

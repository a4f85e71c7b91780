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
 */
import type { ReinforceConfig } from '../../spec/schema.js';
import type { AlgoResult, TrainContext } from '../context.js';
import { NaNError } from '../errors.js';
import { type PolicyFile, assertFinitePolicy, policyFile } from '../policy.js';
import { CategoricalHead } from '../nn/distributions.js';
import { initMlp } from '../nn/init.js';
import { TFJS_ADAM_EPS } from '../nn/mlp.js';

/** One finished episode: the (normalised) observations it acted on, its actions and returns-to-go. */
interface Episode {
  obs: number[];
  actions: number[];
  returns: Float64Array;
}

/** Trains a categorical policy with REINFORCE and a value baseline on the environments the engine builds (and counts). */
export async function trainReinforce(ctx: TrainContext, cfg: ReinforceConfig): Promise<AlgoResult> {
  const { spec, info, rng } = ctx;
  const activation = spec.model.activation;
  if (info.actionSpace.type !== 'discrete') throw new Error(`reinforce needs a discrete action space; ${info.id} has ${info.actionSpace.type}`);
  const nAct = info.actionSpace.n;
  const numEnvs = spec.environment.numEnvs;
  const d = info.observationNames.length;

  const env = ctx.makeEnv(numEnvs);
  const actor = initMlp([d, ...spec.model.hidden, nAct], activation, 0.01, rng, numEnvs);
  const critic = initMlp([d, ...spec.model.hidden, 1], activation, 1.0, rng, numEnvs);
  const as = actor.outStride;
  const cs = critic.outStride;

  const actions = new Int32Array(numEnvs);
  const pi = new CategoricalHead(nAct);
  // The episode each env is in the middle of: observations, actions, shaped rewards.
  const running = Array.from({ length: numEnvs }, () => ({ obs: [] as number[], actions: [] as number[], rewards: [] as number[] }));
  let batch: Episode[] = [];

  let updates = 0;
  let stopReason: AlgoResult['stopReason'] = 'budget';
  const start = Date.now();

  const snapshot = (): PolicyFile => policyFile(info.actionSpace, d, activation, actor.layers(), env.obsNorm());

  /** Closes env i's running episode: returns-to-go, bootstrapped with γ·V(s_T) on truncation. */
  const finishEpisode = (i: number, bootstrap: number): void => {
    const ep = running[i];
    const T = ep.rewards.length;
    const returns = new Float64Array(T);
    let g = bootstrap;
    for (let t = T - 1; t >= 0; t--) {
      g = ep.rewards[t] + cfg.gamma * g;
      returns[t] = g;
    }
    batch.push({ obs: ep.obs, actions: ep.actions, returns });
    running[i] = { obs: [], actions: [], rewards: [] };
  };

  /** One policy step and one value step on the finished episodes in `batch`. */
  const update = (): void => {
    ctx.checkLimits();
    const n = batch.reduce((a, e) => a + e.actions.length, 0);
    const ax = actor.input(n);
    const cx = critic.input(n);
    const actArr = new Int32Array(n);
    const retArr = new Float32Array(n); // single precision, as the networks: a return past 3.4e38 is infinite
    let row = 0;
    for (const e of batch) {
      ax.set(e.obs, row * d);
      actArr.set(e.actions, row);
      retArr.set(e.returns, row);
      row += e.actions.length;
    }
    cx.set(ax);
    const vOut = critic.forward(n);
    const logits = actor.forward(n);
    // Advantages against the baseline (a constant for the policy step).
    const adv = new Float64Array(n);
    for (let k = 0; k < n; k++) adv[k] = retArr[k] - vOut[k * cs];
    if (cfg.normalizeAdvantages && n > 1) {
      let mean = 0;
      for (let k = 0; k < n; k++) mean += adv[k];
      mean /= n;
      let variance = 0;
      for (let k = 0; k < n; k++) variance += (adv[k] - mean) ** 2;
      const sd = Math.sqrt(variance / n) + 1e-8;
      for (let k = 0; k < n; k++) adv[k] = (adv[k] - mean) / sd;
    }
    const gA = actor.gradOutput(n);
    const gC = critic.gradOutput(n);
    let pgLoss = 0;
    let entropy = 0;
    let vLoss = 0;
    for (let k = 0; k < n; k++) {
      const o = k * as;
      const a = actArr[k];
      pi.set(logits, o);
      pgLoss -= pi.logp[a] * adv[k];
      entropy += pi.h;
      // ∂/∂logits of −logπ(a)·A/n − c·H/n.
      pi.gradient(a, -adv[k] / n, -cfg.entropyCoef / n, gA, o);
      const dv = vOut[k * cs] - retArr[k];
      vLoss += dv * dv;
      gC[k * cs] = (2 * dv) / n;
    }
    pgLoss /= n;
    entropy /= n;
    vLoss /= n;
    const loss = pgLoss - cfg.entropyCoef * entropy;
    const finite = Number.isFinite(Math.fround(loss)) && Number.isFinite(Math.fround(vLoss)); // single precision, as the networks
    if (finite) {
      actor.backward(n);
      critic.backward(n);
      actor.adam({ lr: cfg.learningRate, eps: TFJS_ADAM_EPS });
      critic.adam({ lr: cfg.valueLearningRate, eps: TFJS_ADAM_EPS });
    }
    updates += 1;
    if (!finite) {
      const which = Number.isFinite(Math.fround(loss)) ? `value loss became ${Math.fround(vLoss)}` : `loss became ${Math.fround(loss)}`;
      const rates = `algorithm.learningRate ${cfg.learningRate} / valueLearningRate ${cfg.valueLearningRate}`;
      throw new NaNError(`reinforce ${which} at update ${updates} (${rates} may be too high)`);
    }
    const step = env.used;
    ctx.log('losses/policy_loss', step, pgLoss);
    ctx.log('losses/value_loss', step, vLoss);
    ctx.log('losses/entropy', step, entropy);
    ctx.log('charts/SPS', step, step / Math.max(1e-3, (Date.now() - start) / 1000));
    batch = [];
    ctx.progress(step, snapshot);
  };

  for (;;) {
    if (!env.canStep()) {
      // Budget spent: unfinished episodes are dropped, finished ones make a last update.
      if (batch.length > 0) update();
      break;
    }
    const x = env.observe();
    actor.input(numEnvs).set(x.subarray(0, numEnvs * d));
    const logits = actor.forward(numEnvs);
    for (let i = 0; i < numEnvs; i++) {
      actions[i] = pi.draw(logits, i * as, rng);
      for (let k = 0; k < d; k++) running[i].obs.push(x[i * d + k]);
      running[i].actions.push(actions[i]);
    }
    env.step(actions);
    let vFinal: Float32Array | null = null;
    for (let i = 0; i < numEnvs; i++) {
      running[i].rewards.push(env.rewards[i]);
      if (env.terminated[i]) finishEpisode(i, 0);
      else if (env.truncated[i]) {
        if (!vFinal) {
          critic.input(numEnvs).set(env.finalObs().subarray(0, numEnvs * d));
          vFinal = critic.forward(numEnvs);
        }
        finishEpisode(i, vFinal[i * cs]);
      }
    }
    const eps = env.drainEpisodes();
    if (
      eps.length &&
      ctx.episodes(
        env.used,
        eps.map((e) => e.ret),
        eps.map((e) => e.length),
      )
    ) {
      stopReason = 'target-return';
      break;
    }
    if (batch.length >= cfg.episodesPerUpdate) update();
  }
  const final = snapshot();
  assertFinitePolicy(final, 'reinforce');
  return { policy: final, updates, stopReason };
}

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
 * - Acting runs the policy in plain JS on a weight snapshot taken after each update; the
 *   gradient steps run on TensorFlow.js. Networks use orthogonal initialisation (policy
 *   output gain 0.01, value output gain 1), as in PPO.
 */
import type { ReinforceConfig } from '../../spec/schema.js';
import { type AlgoResult, NaNError, type TrainContext } from '../context.js';
import { type DenseLayer, POLICY_FORMAT, type PolicyFile, mlpForward } from '../policy.js';
import { tf, initTf } from '../tf.js';
import { type Net, forward, makeNet, snapshot } from '../nets.js';

/** One finished episode: the (normalised) observations it acted on, its actions and returns-to-go. */
interface Episode {
  obs: number[];
  actions: number[];
  returns: Float64Array;
}

/** Trains a categorical policy with REINFORCE and a value baseline on the environments the engine builds (and counts). */
export async function trainReinforce(ctx: TrainContext, cfg: ReinforceConfig): Promise<AlgoResult> {
  await initTf();
  const { spec, info, rng } = ctx;
  const activation = spec.model.activation;
  if (info.actionSpace.type !== 'discrete') throw new Error(`reinforce needs a discrete action space; ${info.id} has ${info.actionSpace.type}`);
  const nAct = info.actionSpace.n;
  const numEnvs = spec.environment.numEnvs;
  const d = info.observationNames.length;

  const env = ctx.makeEnv(numEnvs);
  const actor = makeNet([d, ...spec.model.hidden, nAct], 0.01, rng);
  const critic = makeNet([d, ...spec.model.hidden, 1], 1.0, rng);
  const actorVars = [...actor.w, ...actor.b];
  const criticVars = [...critic.w, ...critic.b];
  const piOpt = tf.train.adam(cfg.learningRate);
  const vOpt = tf.train.adam(cfg.valueLearningRate);

  const actions = new Int32Array(numEnvs);
  const probs = new Float64Array(nAct);
  // The episode each env is in the middle of: observations, actions, shaped rewards.
  const running = Array.from({ length: numEnvs }, () => ({ obs: [] as number[], actions: [] as number[], rewards: [] as number[] }));
  let batch: Episode[] = [];

  let aLayers = snapshot(actor);
  let cLayers = snapshot(critic);
  let updates = 0;
  let stopReason: AlgoResult['stopReason'] = 'budget';
  const start = Date.now();

  const policyFile = (layers: DenseLayer[]): PolicyFile => ({
    format: POLICY_FORMAT,
    obsDim: d,
    actionSpace: { type: 'discrete', n: nAct },
    activation,
    layers,
    obsNorm: env.obsNorm(),
  });

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
    const obsArr = new Float32Array(n * d);
    const actArr = new Int32Array(n);
    const retArr = new Float32Array(n);
    let row = 0;
    for (const e of batch) {
      obsArr.set(e.obs, row * d);
      actArr.set(e.actions, row);
      retArr.set(e.returns, row);
      row += e.actions.length;
    }
    const stats = tf.tidy(() => {
      const obsT = tf.tensor2d(obsArr, [n, d]);
      const actT = tf.oneHot(tf.tensor1d(actArr, 'int32'), nAct);
      const retT = tf.tensor1d(retArr);
      let adv = tf.sub(retT, tf.reshape(forward(critic, obsT, activation), [-1]));
      if (cfg.normalizeAdvantages && n > 1) {
        const { mean, variance } = tf.moments(adv);
        adv = tf.div(tf.sub(adv, mean), tf.add(tf.sqrt(variance), 1e-8));
      }
      let parts: tf.Scalar[] = [];
      const pi = tf.variableGrads(() => {
        const logpAll = tf.logSoftmax(forward(actor, obsT, activation));
        const logp = tf.sum(tf.mul(logpAll, actT), 1);
        const pgLoss = tf.neg(tf.mean(tf.mul(logp, adv)));
        const entropy = tf.mean(tf.neg(tf.sum(tf.mul(tf.exp(logpAll), logpAll), 1)));
        parts = [pgLoss, entropy].map((t) => tf.keep(t as tf.Scalar));
        return tf.sub(pgLoss, tf.mul(cfg.entropyCoef, entropy)) as tf.Scalar;
      }, actorVars);
      const v = tf.variableGrads(() => tf.mean(tf.square(tf.sub(tf.reshape(forward(critic, obsT, activation), [-1]), retT))) as tf.Scalar, criticVars);
      piOpt.applyGradients(actorVars.map((x) => ({ name: x.name, tensor: pi.grads[x.name] })));
      vOpt.applyGradients(criticVars.map((x) => ({ name: x.name, tensor: v.grads[x.name] })));
      const packed = tf.stack([pi.value, parts[0], v.value, parts[1]]);
      for (const t of parts) t.dispose();
      return packed;
    });
    const [loss, pgLoss, vLoss, entropy] = stats.dataSync();
    stats.dispose();
    updates += 1;
    if (!Number.isFinite(loss) || !Number.isFinite(vLoss)) {
      const which = Number.isFinite(loss) ? `value loss became ${vLoss}` : `loss became ${loss}`;
      throw new NaNError(`reinforce ${which} at update ${updates} (algorithm.learningRate ${cfg.learningRate} / valueLearningRate ${cfg.valueLearningRate} may be too high)`);
    }
    const step = env.used;
    ctx.log('losses/policy_loss', step, pgLoss);
    ctx.log('losses/value_loss', step, vLoss);
    ctx.log('losses/entropy', step, entropy);
    ctx.log('charts/SPS', step, step / Math.max(1e-3, (Date.now() - start) / 1000));
    batch = [];
    aLayers = snapshot(actor);
    cLayers = snapshot(critic);
    ctx.progress(step, () => policyFile(snapshot(actor)));
  };

  try {
    for (;;) {
      if (!env.canStep()) {
        // Budget spent: unfinished episodes are dropped, finished ones make a last update.
        if (batch.length > 0) update();
        break;
      }
      const x = env.observe();
      const logits = mlpForward(aLayers, activation, x, numEnvs);
      for (let i = 0; i < numEnvs; i++) {
        let max = -Infinity;
        for (let j = 0; j < nAct; j++) max = Math.max(max, logits[i * nAct + j]);
        for (let j = 0; j < nAct; j++) probs[j] = Math.exp(logits[i * nAct + j] - max);
        actions[i] = rng.categorical(probs);
        for (let k = 0; k < d; k++) running[i].obs.push(x[i * d + k]);
        running[i].actions.push(actions[i]);
      }
      env.step(actions);
      let vFinal: Float64Array | null = null;
      for (let i = 0; i < numEnvs; i++) {
        running[i].rewards.push(env.rewards[i]);
        if (env.terminated[i]) finishEpisode(i, 0);
        else if (env.truncated[i]) {
          vFinal ??= mlpForward(cLayers, activation, env.finalObs(), numEnvs);
          finishEpisode(i, vFinal[i]);
        }
      }
      const eps = env.drainEpisodes();
      if (eps.length && ctx.episodes(env.used, eps.map((e) => e.ret), eps.map((e) => e.length))) {
        stopReason = 'target-return';
        break;
      }
      if (batch.length >= cfg.episodesPerUpdate) update();
    }
    const final = policyFile(snapshot(actor));
    for (const l of final.layers) {
      if (!l.weights.every(Number.isFinite) || !l.bias.every(Number.isFinite)) throw new NaNError('reinforce produced non-finite weights');
    }
    return { policy: final, updates, stopReason };
  } finally {
    for (const v of [...actorVars, ...criticVars]) v.dispose();
    piOpt.dispose();
    vOpt.dispose();
  }
}

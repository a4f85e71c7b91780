/**
 * PPO for discrete actions (CleanRL's ppo.py, in one readable file): separate actor and
 * critic MLPs with orthogonal initialisation, GAE, clipped surrogate objective, value
 * loss, entropy bonus, per-minibatch advantage normalisation, global gradient clipping
 * and a linearly annealed Adam learning rate. Rollouts run the actor in plain JS on a
 * weight snapshot (faster than dispatching tfjs ops for a handful of rows); the
 * gradient steps run on TensorFlow.js.
 */
import type { PpoConfig } from '../../spec/schema.js';
import { type AlgoResult, NaNError, type TrainContext } from '../context.js';
import type { TrainingEnv } from '../envs/wrappers.js';
import { type DenseLayer, POLICY_FORMAT, type PolicyFile, mlpForward } from '../policy.js';
import { tf, initTf } from '../tf.js';
import { type Net, forward, makeNet, snapshot } from '../nets.js';

/**
 * Behaviour-cloning warm start: fits the actor to the demonstrations' actions with
 * cross-entropy (Adam 1e-3, minibatches of 256) for `dataset.bcEpochs` epochs before RL.
 * Demonstrations are data, not experience: they do not count against the env-step budget, but
 * they join the observation statistics when the spec normalises observations.
 */
function behaviourClone(ctx: TrainContext, env: TrainingEnv, actor: Net, activation: 'tanh' | 'relu', continuous: boolean): void {
  const demos = ctx.demonstrations!;
  if (continuous) throw new Error('dataset.demonstrations: behaviour cloning needs a discrete action space');
  const d = actor.sizes[0];
  const nAct = actor.sizes[actor.sizes.length - 1];
  const n = demos.obs.length;
  if (n === 0) return;
  const flat = new Float64Array(n * d);
  demos.obs.forEach((o, i) => flat.set(o, i * d));
  env.foldObservations(flat, n);
  const x = env.normalizeInPlace(flat, n);
  const opt = tf.train.adam(1e-3);
  const vars = [...actor.w, ...actor.b];
  const order = Array.from({ length: n }, (_, i) => i);
  const batch = Math.min(256, n);
  try {
    for (let epoch = 0; epoch < ctx.spec.dataset.bcEpochs; epoch++) {
      for (let i = n - 1; i > 0; i--) {
        const j = ctx.rng.int(i + 1);
        [order[i], order[j]] = [order[j], order[i]];
      }
      let sum = 0;
      let steps = 0;
      for (let s = 0; s + batch <= n; s += batch) {
        ctx.checkLimits();
        const xb = new Float32Array(batch * d);
        const ab = new Int32Array(batch);
        for (let k = 0; k < batch; k++) {
          const idx = order[s + k];
          for (let q = 0; q < d; q++) xb[k * d + q] = x[idx * d + q];
          ab[k] = demos.actions[idx];
        }
        const loss = opt.minimize(
          () =>
            tf.tidy(() => {
              const logits = forward(actor, tf.tensor2d(xb, [batch, d]), activation);
              const target = tf.oneHot(tf.tensor1d(ab, 'int32'), nAct);
              return tf.neg(tf.mean(tf.sum(tf.mul(target, tf.logSoftmax(logits)), 1))) as tf.Scalar;
            }),
          true,
          vars,
        );
        sum += loss ? loss.dataSync()[0] : 0;
        loss?.dispose();
        steps += 1;
      }
      ctx.log('losses/bc_loss', 0, sum / Math.max(1, steps));
    }
  } finally {
    opt.dispose();
  }
}

/** Trains a policy with PPO on the environments the engine builds (and counts). */
export async function trainPpo(ctx: TrainContext, cfg: PpoConfig): Promise<AlgoResult> {
  await initTf();
  const { spec, info, rng } = ctx;
  const activation = spec.model.activation;
  const space = info.actionSpace;
  const continuous = space.type === 'box';
  // Discrete: nAct logits; continuous: nAct Gaussian means with a learned, state-independent log std.
  const nAct = space.type === 'discrete' ? space.n : space.shape[0];
  const low = space.type === 'box' ? space.low : [];
  const high = space.type === 'box' ? space.high : [];
  const numEnvs = spec.environment.numEnvs;
  const d = info.observationNames.length;

  const env = ctx.makeEnv(numEnvs);
  // CleanRL's plan: rollouts of `steps` per env, as many updates as the budget pays for.
  const steps = Math.min(cfg.rolloutSteps, Math.floor(env.cap / numEnvs));
  const batch = steps * numEnvs;
  const numUpdates = Math.max(1, Math.floor(env.cap / batch));
  const mbSize = Math.max(1, Math.floor(batch / cfg.minibatches));

  const actor = makeNet([d, ...spec.model.hidden, nAct], 0.01, rng);
  const critic = makeNet([d, ...spec.model.hidden, 1], 1.0, rng);
  const logStd = tf.tidy(() => tf.variable(tf.fill([nAct], cfg.initLogStd)));
  const vars = [...actor.w, ...actor.b, ...critic.w, ...critic.b, ...(continuous ? [logStd] : [])];
  const opt = tf.train.adam(cfg.learningRate, 0.9, 0.999, 1e-5);
  const setLr = (lr: number): void => {
    (opt as unknown as { learningRate: number }).learningRate = lr;
  };

  const obsBuf = new Float32Array(batch * d);
  const actBuf = new Float32Array(batch * nAct);
  const logpBuf = new Float32Array(batch);
  const rewBuf = new Float64Array(batch);
  const doneBuf = new Uint8Array(batch); // episode ended after this step
  const valBuf = new Float64Array(batch);
  const advBuf = new Float32Array(batch);
  const retBuf = new Float32Array(batch);
  const perm = new Int32Array(batch);
  const p = new Float64Array(nAct); // action probabilities of one env, reused every step

  let updates = 0;
  let stopReason: AlgoResult['stopReason'] = 'budget';
  const start = Date.now();
  const dispose = (): void => {
    for (const v of vars) v.dispose();
    if (!continuous) logStd.dispose();
    opt.dispose();
  };

  const policyFile = (aLayers: DenseLayer[]): PolicyFile => ({
    format: POLICY_FORMAT,
    obsDim: d,
    actionSpace: space.type === 'discrete' ? { type: 'discrete', n: nAct } : { type: 'box', low: [...low], high: [...high] },
    activation,
    layers: aLayers,
    obsNorm: env.obsNorm(),
  });

  try {
    if (ctx.demonstrations) behaviourClone(ctx, env, actor, activation, continuous);
    for (let u = 0; u < numUpdates; u++) {
      if (cfg.annealLr) setLr(cfg.learningRate * (1 - u / numUpdates));
      const aLayers = snapshot(actor);
      const cLayers = snapshot(critic);
      // The log std changes only at updates: read it once per rollout, not per step.
      const std = continuous ? Array.from(logStd.dataSync(), Math.exp) : [];
      let reached = false;
      for (let s = 0; s < steps; s++) {
        const x = env.observe();
        const logits = mlpForward(aLayers, activation, x, numEnvs);
        const values = mlpForward(cLayers, activation, x, numEnvs);
        const actions = new Float64Array(numEnvs * nAct);
        for (let i = 0; i < numEnvs; i++) {
          const row = s * numEnvs + i;
          for (let k = 0; k < d; k++) obsBuf[row * d + k] = x[i * d + k];
          valBuf[row] = values[i];
          if (continuous) {
            let lp = 0;
            for (let j = 0; j < nAct; j++) {
              const mu = logits[i * nAct + j];
              const z = rng.normal();
              const a = mu + std[j] * z;
              actBuf[row * nAct + j] = a;
              actions[i * nAct + j] = Math.min(high[j], Math.max(low[j], a)); // the env gets the clipped action
              lp += -0.5 * z * z - Math.log(std[j]) - 0.5 * Math.log(2 * Math.PI);
            }
            logpBuf[row] = lp;
            continue;
          }
          let max = -Infinity;
          for (let j = 0; j < nAct; j++) max = Math.max(max, logits[i * nAct + j]);
          let sum = 0;
          for (let j = 0; j < nAct; j++) sum += p[j] = Math.exp(logits[i * nAct + j] - max);
          const a = rng.categorical(p);
          actions[i] = a;
          actBuf[row] = a;
          logpBuf[row] = logits[i * nAct + a] - max - Math.log(sum);
        }
        env.step(actions, continuous ? nAct : 1);
        // Bootstrap through time-limit truncation with the value of the final observation.
        let anyTrunc = false;
        for (let i = 0; i < numEnvs; i++) if (env.truncated[i]) anyTrunc = true;
        const vNext = anyTrunc ? mlpForward(cLayers, activation, env.finalObs(), numEnvs) : null;
        for (let i = 0; i < numEnvs; i++) {
          const row = s * numEnvs + i;
          rewBuf[row] = env.rewards[i] + (env.truncated[i] && vNext ? cfg.gamma * vNext[i] : 0);
          doneBuf[row] = env.terminated[i] || env.truncated[i] ? 1 : 0;
        }
        const eps = env.drainEpisodes();
        if (eps.length && ctx.episodes(env.used, eps.map((e) => e.ret), eps.map((e) => e.length))) reached = true;
      }

      // GAE(λ) over the rollout, bootstrapping from the value of the current observations.
      const lastV = mlpForward(cLayers, activation, env.currentObs(), numEnvs);
      const lastGae = new Float64Array(numEnvs);
      for (let s = steps - 1; s >= 0; s--) {
        for (let i = 0; i < numEnvs; i++) {
          const row = s * numEnvs + i;
          const nonTerminal = 1 - doneBuf[row];
          const nextV = s === steps - 1 ? lastV[i] : valBuf[row + numEnvs];
          const delta = rewBuf[row] + cfg.gamma * nextV * nonTerminal - valBuf[row];
          lastGae[i] = delta + cfg.gamma * cfg.gaeLambda * nonTerminal * lastGae[i];
          advBuf[row] = lastGae[i];
          retBuf[row] = lastGae[i] + valBuf[row];
        }
      }

      let pgSum = 0;
      let vSum = 0;
      let entSum = 0;
      let klSum = 0;
      let clipSum = 0;
      let count = 0;
      for (let i = 0; i < batch; i++) perm[i] = i;
      for (let epoch = 0; epoch < cfg.epochs; epoch++) {
        for (let i = batch - 1; i > 0; i--) {
          const j = rng.int(i + 1);
          const t = perm[i];
          perm[i] = perm[j];
          perm[j] = t;
        }
        for (let start0 = 0; start0 + mbSize <= batch; start0 += mbSize) {
          ctx.checkLimits();
          const mbObs = new Float32Array(mbSize * d);
          const mbAct = new Float32Array(mbSize * (continuous ? nAct : 1));
          const mbLogp = new Float32Array(mbSize);
          const mbAdv = new Float32Array(mbSize);
          const mbRet = new Float32Array(mbSize);
          for (let k = 0; k < mbSize; k++) {
            const idx = perm[start0 + k];
            mbObs.set(obsBuf.subarray(idx * d, idx * d + d), k * d);
            if (continuous) mbAct.set(actBuf.subarray(idx * nAct, idx * nAct + nAct), k * nAct);
            else mbAct[k] = actBuf[idx];
            mbLogp[k] = logpBuf[idx];
            mbAdv[k] = advBuf[idx];
            mbRet[k] = retBuf[idx];
          }
          if (cfg.normalizeAdvantages && mbSize > 1) {
            let m = 0;
            for (let k = 0; k < mbSize; k++) m += mbAdv[k];
            m /= mbSize;
            let v = 0;
            for (let k = 0; k < mbSize; k++) v += (mbAdv[k] - m) ** 2;
            const sd = Math.sqrt(v / (mbSize - 1)) + 1e-8;
            for (let k = 0; k < mbSize; k++) mbAdv[k] = (mbAdv[k] - m) / sd;
          }
          const stats = tf.tidy(() => {
            const obsT = tf.tensor2d(mbObs, [mbSize, d]);
            const actT = continuous ? tf.tensor2d(mbAct, [mbSize, nAct]) : tf.oneHot(tf.tensor1d(Int32Array.from(mbAct), 'int32'), nAct);
            const oldLogpT = tf.tensor1d(mbLogp);
            const advT = tf.tensor1d(mbAdv);
            const retT = tf.tensor1d(mbRet);
            let parts: tf.Scalar[] = [];
            const { value: loss, grads } = tf.variableGrads(() => {
              const out = forward(actor, obsT, activation);
              let logp: tf.Tensor;
              let entropy: tf.Tensor;
              if (continuous) {
                const z = tf.div(tf.sub(actT, out), tf.exp(logStd));
                logp = tf.sum(tf.sub(tf.mul(-0.5, tf.square(z)), tf.add(logStd, 0.5 * Math.log(2 * Math.PI))), 1);
                entropy = tf.sum(tf.add(logStd, 0.5 * Math.log(2 * Math.PI * Math.E)));
              } else {
                const logpAll = tf.logSoftmax(out);
                logp = tf.sum(tf.mul(logpAll, actT), 1);
                entropy = tf.mean(tf.neg(tf.sum(tf.mul(tf.exp(logpAll), logpAll), 1)));
              }
              const logRatio = tf.sub(logp, oldLogpT);
              const ratio = tf.exp(logRatio);
              const pg1 = tf.mul(ratio, advT);
              const pg2 = tf.mul(tf.clipByValue(ratio, 1 - cfg.clip, 1 + cfg.clip), advT);
              const pgLoss = tf.neg(tf.mean(tf.minimum(pg1, pg2)));
              const v = tf.reshape(forward(critic, obsT, activation), [-1]);
              const vLoss = tf.mul(0.5, tf.mean(tf.square(tf.sub(v, retT))));
              const approxKl = tf.mean(tf.sub(tf.sub(ratio, 1), logRatio));
              const clipFrac = tf.mean(tf.cast(tf.greater(tf.abs(tf.sub(ratio, 1)), cfg.clip), 'float32'));
              parts = [pgLoss, vLoss, entropy, approxKl, clipFrac].map((t) => tf.keep(t as tf.Scalar));
              return tf.add(tf.sub(pgLoss, tf.mul(cfg.entropyCoef, entropy)), tf.mul(cfg.valueCoef, vLoss)) as tf.Scalar;
            }, vars);
            const gradList = vars.map((v) => grads[v.name]);
            const norm2 = tf.sqrt(tf.addN(gradList.map((g) => tf.sum(tf.square(g)))));
            const scale = tf.div(cfg.maxGradNorm, tf.maximum(norm2, cfg.maxGradNorm));
            const clipped: Record<string, tf.Tensor> = {};
            for (const v of vars) clipped[v.name] = tf.mul(grads[v.name], scale);
            opt.applyGradients(vars.map((v) => ({ name: v.name, tensor: clipped[v.name] })));
            const packed = tf.stack([loss, ...parts]);
            for (const t of parts) t.dispose();
            return packed;
          });
          const [loss, pg, vl, ent, kl, cf] = stats.dataSync();
          stats.dispose();
          if (!Number.isFinite(loss)) {
            throw new NaNError(`ppo loss became ${loss} at update ${u + 1} (algorithm.learningRate ${cfg.learningRate} may be too high)`);
          }
          pgSum += pg;
          vSum += vl;
          entSum += ent;
          klSum += kl;
          clipSum += cf;
          count += 1;
        }
      }
      updates += 1;
      const n = Math.max(1, count);
      const step = env.used;
      ctx.log('losses/policy_loss', step, pgSum / n);
      ctx.log('losses/value_loss', step, vSum / n);
      ctx.log('losses/entropy', step, entSum / n);
      ctx.log('losses/approx_kl', step, klSum / n);
      ctx.log('losses/clipfrac', step, clipSum / n);
      ctx.log('charts/learning_rate', step, (opt as unknown as { learningRate: number }).learningRate);
      ctx.log('charts/SPS', step, step / Math.max(1e-3, (Date.now() - start) / 1000));
      ctx.progress(step, () => policyFile(snapshot(actor)));
      if (reached) {
        stopReason = 'target-return';
        break;
      }
    }
    const final = policyFile(snapshot(actor));
    for (const l of final.layers) {
      if (!l.weights.every(Number.isFinite) || !l.bias.every(Number.isFinite)) throw new NaNError('ppo produced non-finite weights');
    }
    return { policy: final, updates, stopReason };
  } finally {
    dispose();
  }
}

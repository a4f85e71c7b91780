/**
 * PPO for discrete actions (CleanRL's ppo.py, in one readable file): separate actor and
 * critic MLPs with orthogonal initialisation, GAE, clipped surrogate objective, value
 * loss, entropy bonus, per-minibatch advantage normalisation, global gradient clipping
 * and a linearly annealed Adam learning rate. Acting and learning both run on the fused
 * engine (`../nn/mlp.ts`): the loss's gradient with respect to the networks' outputs is
 * written out here, row by row, and the engine back-propagates it.
 */
import type { PpoConfig } from '../../spec/schema.js';
import type { AlgoResult, TrainContext } from '../context.js';
import { NaNError } from '../errors.js';
import type { TrainingEnv } from '../envs/wrappers.js';
import { type DenseLayer, POLICY_FORMAT, type PolicyFile } from '../policy.js';
import type { FusedMlp } from '../nn/mlp.js';
import { VecAdam } from '../nn/adam.js';
import { initMlp } from '../nn/init.js';

/** tfjs's default Adam epsilon, kept for the behaviour-cloning warm start. */
const BC_EPS = 1e-7;

/**
 * Behaviour-cloning warm start: fits the actor to the demonstrations' actions with
 * cross-entropy (Adam 1e-3, minibatches of 256) for `dataset.bcEpochs` epochs before RL.
 * Demonstrations are data, not experience: they do not count against the env-step budget, but
 * they join the observation statistics when the spec normalises observations.
 */
function behaviourClone(ctx: TrainContext, env: TrainingEnv, actor: FusedMlp, continuous: boolean): void {
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
        let max = -Infinity;
        for (let j = 0; j < nAct; j++) max = Math.max(max, out[k * os + j]);
        let z = 0;
        for (let j = 0; j < nAct; j++) z += Math.exp(out[k * os + j] - max);
        loss -= out[k * os + a] - max - Math.log(z);
        for (let j = 0; j < nAct; j++) g[k * os + j] = (Math.exp(out[k * os + j] - max) / z - (j === a ? 1 : 0)) / batch;
      }
      actor.backward(batch);
      actor.adam({ lr: 1e-3, eps: BC_EPS });
      sum += loss / batch;
      steps += 1;
    }
    ctx.log('losses/bc_loss', 0, sum / Math.max(1, steps));
  }
  actor.resetAdam(); // PPO's optimiser starts fresh, as it did with a separate optimiser.
}

/** Trains a policy with PPO on the environments the engine builds (and counts). */
export async function trainPpo(ctx: TrainContext, cfg: PpoConfig): Promise<AlgoResult> {
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

  const capacity = Math.max(mbSize, numEnvs);
  const actor = initMlp([d, ...spec.model.hidden, nAct], activation, 0.01, rng, capacity);
  const critic = initMlp([d, ...spec.model.hidden, 1], activation, 1.0, rng, capacity);
  const logStd = new Float64Array(nAct).fill(cfg.initLogStd);
  const logStdGrad = new Float64Array(nAct);
  const logStdAdam = new VecAdam(nAct);
  let lr = cfg.learningRate;
  const as = actor.outStride;
  const cs = critic.outStride;

  const obsBuf = new Float32Array(batch * d);
  const actBuf = new Float32Array(batch * nAct);
  const logpBuf = new Float32Array(batch);
  const rewBuf = new Float64Array(batch);
  const doneBuf = new Uint8Array(batch); // episode ended after this step
  const valBuf = new Float64Array(batch);
  const advBuf = new Float32Array(batch);
  const retBuf = new Float32Array(batch);
  const perm = new Int32Array(batch);
  const p = new Float64Array(nAct); // action probabilities of one row, reused
  const std = new Float64Array(nAct);
  const actions = new Float64Array(numEnvs * nAct);
  const lastGae = new Float64Array(numEnvs);
  const vNext = new Float64Array(numEnvs);
  const mbAdv = new Float64Array(mbSize);

  /** The critic's values of `rows` observation rows. */
  const values = (x: Float64Array, rows: number, into: Float64Array): void => {
    critic.input(rows).set(x.subarray(0, rows * d));
    const v = critic.forward(rows);
    for (let i = 0; i < rows; i++) into[i] = v[i * cs];
  };

  let updates = 0;
  let stopReason: AlgoResult['stopReason'] = 'budget';
  const start = Date.now();

  const policyFile = (aLayers: DenseLayer[]): PolicyFile => ({
    format: POLICY_FORMAT,
    obsDim: d,
    actionSpace: space.type === 'discrete' ? { type: 'discrete', n: nAct } : { type: 'box', low: [...low], high: [...high] },
    activation,
    layers: aLayers,
    obsNorm: env.obsNorm(),
  });

  if (ctx.demonstrations) behaviourClone(ctx, env, actor, continuous);
  for (let u = 0; u < numUpdates; u++) {
    if (cfg.annealLr) lr = cfg.learningRate * (1 - u / numUpdates);
    for (let j = 0; j < nAct; j++) std[j] = Math.exp(logStd[j]);
    let reached = false;
    for (let s = 0; s < steps; s++) {
      const x = env.observe();
      actor.input(numEnvs).set(x.subarray(0, numEnvs * d));
      const logits = actor.forward(numEnvs);
      values(x, numEnvs, vNext);
      for (let i = 0; i < numEnvs; i++) {
        const row = s * numEnvs + i;
        for (let k = 0; k < d; k++) obsBuf[row * d + k] = x[i * d + k];
        valBuf[row] = vNext[i];
        if (continuous) {
          let lp = 0;
          for (let j = 0; j < nAct; j++) {
            const mu = logits[i * as + j];
            const z = rng.normal();
            const a = mu + std[j] * z;
            actBuf[row * nAct + j] = a;
            actions[i * nAct + j] = Math.min(high[j], Math.max(low[j], a)); // the env gets the clipped action
            lp += -0.5 * z * z - logStd[j] - 0.5 * Math.log(2 * Math.PI);
          }
          logpBuf[row] = lp;
          continue;
        }
        let max = -Infinity;
        for (let j = 0; j < nAct; j++) max = Math.max(max, logits[i * as + j]);
        let sum = 0;
        for (let j = 0; j < nAct; j++) sum += p[j] = Math.exp(logits[i * as + j] - max);
        const a = rng.categorical(p);
        actions[i] = a;
        actBuf[row] = a;
        logpBuf[row] = logits[i * as + a] - max - Math.log(sum);
      }
      env.step(actions, continuous ? nAct : 1);
      // Bootstrap through time-limit truncation with the value of the final observation.
      let anyTrunc = false;
      for (let i = 0; i < numEnvs; i++) if (env.truncated[i]) anyTrunc = true;
      if (anyTrunc) values(env.finalObs(), numEnvs, vNext);
      for (let i = 0; i < numEnvs; i++) {
        const row = s * numEnvs + i;
        rewBuf[row] = env.rewards[i] + (env.truncated[i] ? cfg.gamma * vNext[i] : 0);
        doneBuf[row] = env.terminated[i] || env.truncated[i] ? 1 : 0;
      }
      const eps = env.drainEpisodes();
      if (eps.length && ctx.episodes(env.used, eps.map((e) => e.ret), eps.map((e) => e.length))) reached = true;
    }

    // GAE(λ) over the rollout, bootstrapping from the value of the current observations.
    values(env.currentObs(), numEnvs, vNext);
    lastGae.fill(0);
    for (let s = steps - 1; s >= 0; s--) {
      for (let i = 0; i < numEnvs; i++) {
        const row = s * numEnvs + i;
        const nonTerminal = 1 - doneBuf[row];
        const nextV = s === steps - 1 ? vNext[i] : valBuf[row + numEnvs];
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
      rng.shuffle(perm);
      for (let start0 = 0; start0 + mbSize <= batch; start0 += mbSize) {
        ctx.checkLimits();
        const B = mbSize;
        const ax = actor.input(B);
        const cx = critic.input(B);
        for (let k = 0; k < B; k++) {
          const idx = perm[start0 + k];
          for (let q = 0; q < d; q++) ax[k * d + q] = cx[k * d + q] = obsBuf[idx * d + q];
          mbAdv[k] = advBuf[idx];
        }
        if (cfg.normalizeAdvantages && B > 1) {
          let m = 0;
          for (let k = 0; k < B; k++) m += mbAdv[k];
          m /= B;
          let v = 0;
          for (let k = 0; k < B; k++) v += (mbAdv[k] - m) ** 2;
          const sd = Math.sqrt(v / (B - 1)) + 1e-8;
          for (let k = 0; k < B; k++) mbAdv[k] = (mbAdv[k] - m) / sd;
        }
        // The log std moves with every minibatch's Adam step: its std must be the current one.
        for (let j = 0; j < nAct; j++) std[j] = Math.exp(logStd[j]);
        const out = actor.forward(B);
        const vOut = critic.forward(B);
        const gA = actor.gradOutput(B);
        const gC = critic.gradOutput(B);
        logStdGrad.fill(0);
        let pg = 0;
        let vl = 0;
        let ent = 0;
        let kl = 0;
        let cf = 0;
        for (let k = 0; k < B; k++) {
          const idx = perm[start0 + k];
          const o = k * as;
          // log π(a|s) of the stored action under the current policy (and, discrete, the softmax).
          let logp = 0;
          let rowEnt = 0;
          let lse = 0;
          if (continuous) {
            for (let j = 0; j < nAct; j++) {
              const z = (actBuf[idx * nAct + j] - out[o + j]) / std[j];
              logp += -0.5 * z * z - logStd[j] - 0.5 * Math.log(2 * Math.PI);
            }
          } else {
            let max = -Infinity;
            for (let j = 0; j < nAct; j++) max = Math.max(max, out[o + j]);
            let sum = 0;
            for (let j = 0; j < nAct; j++) sum += p[j] = Math.exp(out[o + j] - max);
            lse = max + Math.log(sum);
            for (let j = 0; j < nAct; j++) {
              p[j] /= sum;
              if (p[j] > 0) rowEnt -= p[j] * (out[o + j] - lse);
            }
            logp = out[o + actBuf[idx]] - lse;
          }
          const logRatio = logp - logpBuf[idx];
          const ratio = Math.exp(logRatio);
          const A = mbAdv[k];
          const clipped = Math.min(1 + cfg.clip, Math.max(1 - cfg.clip, ratio));
          pg -= Math.min(ratio * A, clipped * A);
          kl += ratio - 1 - logRatio;
          if (Math.abs(ratio - 1) > cfg.clip) cf += 1;
          ent += rowEnt;
          // ∂loss/∂log π: the unclipped branch is taken when it is the smaller (ties too).
          const gLogp = ratio * A <= clipped * A ? (-A * ratio) / B : 0;
          if (continuous) {
            for (let j = 0; j < nAct; j++) {
              const z = (actBuf[idx * nAct + j] - out[o + j]) / std[j];
              gA[o + j] = (gLogp * z) / std[j];
              logStdGrad[j] += gLogp * (z * z - 1);
            }
          } else {
            const a = actBuf[idx];
            for (let j = 0; j < nAct; j++) {
              const logpj = out[o + j] - lse;
              gA[o + j] = gLogp * ((j === a ? 1 : 0) - p[j]) + (cfg.entropyCoef / B) * p[j] * (logpj + rowEnt);
            }
          }
          const dv = vOut[k * cs] - retBuf[idx];
          vl += dv * dv;
          gC[k * cs] = (cfg.valueCoef * dv) / B;
        }
        pg /= B;
        vl = (0.5 * vl) / B;
        if (continuous) {
          ent = 0;
          for (let j = 0; j < nAct; j++) {
            ent += logStd[j] + 0.5 * Math.log(2 * Math.PI * Math.E);
            logStdGrad[j] -= cfg.entropyCoef;
          }
        } else ent /= B;
        const loss = pg - cfg.entropyCoef * ent + cfg.valueCoef * vl;
        // Judged in single precision, as the networks compute: a loss past 3.4e38 has overflowed.
        const loss32 = Math.fround(loss);
        if (!Number.isFinite(loss32) || !Number.isFinite(Math.fround(vl))) {
          throw new NaNError(`ppo loss became ${Number.isFinite(loss32) ? Math.fround(vl) : loss32} at update ${u + 1} (algorithm.learningRate ${cfg.learningRate} may be too high)`);
        }
        actor.backward(B);
        critic.backward(B);
        let sq = actor.gradSumSq() + critic.gradSumSq();
        if (continuous) for (let j = 0; j < nAct; j++) sq += logStdGrad[j] ** 2;
        const norm = Math.sqrt(sq);
        const gradScale = cfg.maxGradNorm / Math.max(norm, cfg.maxGradNorm);
        const step = { lr, eps: 1e-5, gradScale };
        actor.adam(step);
        critic.adam(step);
        if (continuous) logStdAdam.step(logStd, logStdGrad, step);
        pgSum += pg;
        vSum += vl;
        entSum += ent;
        klSum += kl / B;
        clipSum += cf / B;
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
    ctx.log('charts/learning_rate', step, lr);
    ctx.log('charts/SPS', step, step / Math.max(1e-3, (Date.now() - start) / 1000));
    ctx.progress(step, () => policyFile(actor.layers()));
    if (reached) {
      stopReason = 'target-return';
      break;
    }
  }
  const final = policyFile(actor.layers());
  for (const l of final.layers) {
    if (!l.weights.every(Number.isFinite) || !l.bias.every(Number.isFinite)) throw new NaNError('ppo produced non-finite weights');
  }
  return { policy: final, updates, stopReason };
}

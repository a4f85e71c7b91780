import { getEnvironment } from '../inner/envs/index.js';
import type { PhysParams } from '../inner/envs/types.js';
import { PolicyRunner } from '../inner/policy.js';
import { Rng } from '../util/rng.js';
import type { Anchors, HiddenEvaluation } from './hidden-types.js';
import { heldOutSeeds } from './secret.js';

/** Anything that picks discrete actions for a batch of raw observations. */
export interface Actor {
  act(obs: ArrayLike<number>, rows: number): Int32Array;
}

/**
 * Mean undiscounted return of `actor` on the canonical environment reward over one
 * episode per seed, all episodes stepped together.
 */
export function meanEpisodeReturn(actor: Actor, envId: string, seeds: number[], params: PhysParams = {}): number {
  const { make, info } = getEnvironment(envId);
  const d = info.observationNames.length;
  const envs = seeds.map(() => make());
  const obs = new Float64Array(seeds.length * d);
  seeds.forEach((seed, i) => obs.set(envs[i].reset({ seed, params }).obs, i * d));
  const returns = new Float64Array(seeds.length);
  let alive = seeds.map((_, i) => i);
  while (alive.length) {
    const batch = new Float64Array(alive.length * d);
    alive.forEach((e, k) => batch.set(obs.subarray(e * d, e * d + d), k * d));
    const actions = actor.act(batch, alive.length);
    const still: number[] = [];
    alive.forEach((e, k) => {
      const r = envs[e].step(actions[k]);
      returns[e] += r.reward;
      obs.set(r.obs, e * d);
      if (!r.terminated && !r.truncated) still.push(e);
    });
    alive = still;
  }
  return returns.reduce((a, b) => a + b, 0) / seeds.length;
}

/** A uniformly random actor over `n` discrete actions (the 0 anchor). */
export function randomActor(n: number, seed: number): Actor {
  const rng = new Rng(seed);
  return {
    act(_obs, rows) {
      return Int32Array.from({ length: rows }, () => rng.int(n));
    },
  };
}

/**
 * A control task's hidden evaluation: the greedy policy's mean canonical return over
 * `episodes` held-out episodes on `params`, normalised between a uniformly random policy on
 * the same episodes (0) and `reference` (1).
 */
export function controlHiddenEvaluation(o: {
  taskId: string;
  envId: string;
  episodes: number;
  reference: number;
  params?: PhysParams;
  referenceHow: string;
}): HiddenEvaluation {
  let anchors: Anchors | null = null;
  const seeds = (): number[] => heldOutSeeds(o.taskId, o.episodes);
  return {
    taskId: o.taskId,
    score(policy) {
      return meanEpisodeReturn(new PolicyRunner(policy), o.envId, seeds(), o.params);
    },
    anchors() {
      const { actionSpace } = getEnvironment(o.envId).info;
      if (actionSpace.type !== 'discrete') throw new Error(`${o.envId}: the random anchor needs a discrete action space`);
      anchors ??= {
        random: meanEpisodeReturn(randomActor(actionSpace.n, heldOutSeeds(`${o.taskId}/random`, 1)[0]), o.envId, seeds(), o.params),
        reference: o.reference,
        how: `random: a uniformly random policy on the same held-out episodes; reference: ${o.referenceHow}`,
      };
      return anchors;
    },
  };
}

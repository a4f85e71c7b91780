/**
 * The evaluation half of the control tasks on the built-in simulators (harness side only: the
 * scorer reaches it through `tasks/hidden.ts`): the greedy policy's mean canonical return over
 * held-out episodes whose seeds come from the evaluation secret, normalised between a uniformly
 * random policy (0) and the task's reference return (1); and what the evaluation of each built-in
 * control task knows (`CONTROL_EVALUATIONS`), looked up by task id.
 */
import { getEnvironment } from '../../inner/envs/index.js';
import type { PhysParams, Space } from '../../inner/envs/types.js';
import { type PolicyFile, PolicyRunner } from '../../inner/policy.js';
import { Rng } from '../../util/rng.js';
import type { Anchors, HiddenEvaluation } from '../hidden-types.js';
import { evalSecret, heldOutSeeds } from '../secret.js';
import { meanStderr } from '../bootstrap.js';

/** Anything that picks actions for a batch of raw observations (rows × actionDim values). */
export interface Actor {
  act(obs: ArrayLike<number>, rows: number): ArrayLike<number>;
  readonly actionDim?: number;
}

/**
 * Mean undiscounted return of `actor` on the canonical environment reward over one
 * episode per seed, all episodes stepped together.
 */
export function meanEpisodeReturn(actor: Actor, envId: string, seeds: number[], params: PhysParams = {}): number {
  const returns = episodeReturns(actor, envId, seeds, params);
  return returns.reduce((a, b) => a + b, 0) / seeds.length;
}

/** The undiscounted canonical return of each episode, one per seed, all stepped together. */
export function episodeReturns(actor: Actor, envId: string, seeds: number[], params: PhysParams = {}): Float64Array {
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
    const m = actor.actionDim ?? 1;
    const still: number[] = [];
    alive.forEach((e, k) => {
      const r = envs[e].step(m === 1 ? actions[k] : Array.from({ length: m }, (_, j) => actions[k * m + j]));
      returns[e] += r.reward;
      obs.set(r.obs, e * d);
      if (!r.terminated && !r.truncated) still.push(e);
    });
    alive = still;
  }
  return returns;
}

/** A uniformly random actor over an action space (the 0 anchor). */
export function randomActor(space: Space, seed: number): Actor {
  const rng = new Rng(seed);
  if (space.type === 'discrete') {
    return { act: (_obs, rows) => Float64Array.from({ length: rows }, () => rng.int(space.n)) };
  }
  const m = space.low.length;
  return {
    actionDim: m,
    act: (_obs, rows) => Float64Array.from({ length: rows * m }, (_, k) => rng.uniform(space.low[k % m], space.high[k % m])),
  };
}

/**
 * A control task's hidden evaluation: the greedy policy's mean canonical return over
 * `episodes` held-out episodes on `params`, normalised between a uniformly random policy on
 * the same episodes (0) and `reference` (1). Its standard error is the bootstrap over the episodes.
 */
export function controlEvaluation(o: {
  taskId: string;
  envId: string;
  episodes: number;
  reference: number;
  params?: PhysParams;
  referenceHow: string;
}): HiddenEvaluation {
  // Anchors depend on the held-out episodes, hence on the secret they were computed under.
  let anchors: { secret: string; value: Anchors } | null = null;
  const seeds = (): number[] => heldOutSeeds(o.taskId, o.episodes);
  return {
    taskId: o.taskId,
    score(trained) {
      const obsDim = getEnvironment(o.envId).info.observationNames.length;
      const policy = trained as PolicyFile;
      if (policy.obsDim !== obsDim) throw new Error(`policy.json: obsDim is ${String(policy.obsDim)}, the environment observes ${obsDim} values`);
      const runner = new PolicyRunner(policy);
      const returns = episodeReturns(runner, o.envId, seeds(), o.params);
      return { raw: returns.reduce((a, b) => a + b, 0) / returns.length, stderr: meanStderr(returns) };
    },
    anchors() {
      const secret = evalSecret();
      if (anchors?.secret !== secret) {
        const { actionSpace } = getEnvironment(o.envId).info;
        const random = meanEpisodeReturn(randomActor(actionSpace, heldOutSeeds(`${o.taskId}/random`, 1)[0]), o.envId, seeds(), o.params);
        const how = `random: a uniformly random policy on the same held-out episodes; reference: ${o.referenceHow}`;
        anchors = { secret, value: { random, reference: o.reference, how } };
      }
      return anchors.value;
    },
  };
}

/**
 * What the evaluation of a control task on a built-in simulator knows besides its environment:
 * the physics of the held-out episodes (`params`, the simulator's defaults when absent; or drawn
 * from the secret by `deployment`, for generated tasks) and the reference return. Their number is
 * public: the task definition's `evaluationEpisodes`, in the brief.
 */
export interface ControlEvaluationSettings {
  params?: PhysParams;
  reference: number;
  /** How the reference was obtained, in words. */
  referenceHow: string;
  /** The deployment physics under an evaluation secret (generated tasks); without it the episodes run on `params`. */
  deployment?: (secret: string) => PhysParams;
}

/**
 * The evaluation of a control task whose deployment physics may come from the evaluation secret
 * (`settings.deployment`; else `settings.params`): rebuilt whenever the secret changes, so the
 * physics, the episodes and the anchors always belong to one secret.
 */
export function secretPhysicsEvaluation(def: { id: string; envId: string; evaluationEpisodes: number }, settings: ControlEvaluationSettings): HiddenEvaluation {
  let built: { secret: string; ev: HiddenEvaluation } | null = null;
  const current = (): HiddenEvaluation => {
    const secret = evalSecret();
    if (built?.secret !== secret) {
      const params = settings.deployment ? settings.deployment(secret) : settings.params;
      const { reference, referenceHow } = settings;
      const episodes = def.evaluationEpisodes;
      built = { secret, ev: controlEvaluation({ taskId: def.id, envId: def.envId, episodes, reference, params, referenceHow }) };
    }
    return built.ev;
  };
  return { taskId: def.id, score: (trained) => current().score(trained), anchors: () => current().anchors() };
}

const MAX_CARTPOLE = { reference: 500, referenceHow: 'the maximum return (500 steps)' };

/** What the evaluation of each built-in control task (`control/tasks.ts`) knows, by task id. */
export const CONTROL_EVALUATIONS: Readonly<Record<string, ControlEvaluationSettings>> = {
  'cartpole-balance': MAX_CARTPOLE,
  'cartpole-short': MAX_CARTPOLE,
  // Deployed on a longer, heavier pole and a weaker push than the simulator's defaults (the brief says so, not by how much).
  'cartpole-heavy': { params: { poleLength: 1.2, massPole: 0.6, forceMag: 6 }, ...MAX_CARTPOLE },
  'acrobot-swingup': { reference: -100, referenceHow: "Gymnasium's reward threshold for Acrobot-v1 (−100)" },
  'mountaincar-reach': { reference: -110, referenceHow: "Gymnasium's reward threshold for MountainCar-v0 (−110)" },
  'pendulum-swingup': { reference: -150, referenceHow: "a good swing-up controller's return (about −150 over 200 steps)" },
};

/**
 * The evaluation of a Gymnasium task (harness side only: the scorer imports it through
 * tasks/hidden.ts), what it knows (`gymnasiumEvaluationSettings`; the built-in tasks' are
 * `GYMNASIUM_EVALUATIONS`, by task id). The held-out seeds come from the evaluation secret and go to a bridge
 * process the scorer starts for the one scoring; job code never meets them. One episode per
 * seed, all stepped together, without autoreset; the trained policy acts greedily in this
 * thread (`PolicyRunner`), whatever trained it (the embedded engine or an outside trainer that
 * writes the same policy.json).
 */
import { GymBridge, checkDeclared } from '../../inner/envs/gym-bridge.js';
import { type PolicyFile, PolicyRunner } from '../../inner/policy.js';
import type { GymnasiumEnvironment } from '../../spec/brief.js';
import { meanStderr } from '../bootstrap.js';
import { type Actor, randomActor } from '../control/evaluate.js';
import type { Anchors, HiddenEvaluation } from '../hidden-types.js';
import { evalSecret, heldOutSeeds } from '../secret.js';
import { type GymnasiumTaskDef, type GymnasiumTaskOptions, gymnasiumReference } from './define.js';

/** The undiscounted return of one episode per seed of `g`, stepped together in one bridge. */
export function bridgeEpisodeReturns(actor: Actor, g: GymnasiumEnvironment, seeds: number[]): Float64Array {
  const n = seeds.length;
  const bridge = new GymBridge({ envId: g.id, allowImport: g.allowImport, kwargs: g.kwargs, num: n, seeds, autoreset: false, idleTimeoutS: 300 });
  try {
    checkDeclared(g, bridge.hello);
    const returns = new Float64Array(n);
    const done = new Uint8Array(n);
    let alive = n;
    for (let step = 0; alive > 0; step++) {
      if (step > g.maxEpisodeSteps) throw new Error(`gymnasium environment ${g.id}: episodes still running after ${g.maxEpisodeSteps} steps (maxEpisodeSteps)`);
      bridge.step(actor.act(bridge.obs, n));
      for (let i = 0; i < n; i++) {
        if (done[i]) continue;
        returns[i] += bridge.rewards[i];
        if (bridge.terminated[i] || bridge.truncated[i]) {
          done[i] = 1;
          alive -= 1;
        }
      }
    }
    return returns;
  } finally {
    bridge.close();
  }
}

/** What the evaluation of a Gymnasium task knows: its held-out episodes and anchors (the random anchor is measured when not given). */
export interface GymnasiumEvaluationSettings {
  reference: number;
  random?: number;
  /** How the anchors were obtained, in words. */
  how: string;
}

/** What the evaluation of the Gymnasium task made from `o` (checked by `gymnasiumTask`) knows. */
export function gymnasiumEvaluationSettings(o: Pick<GymnasiumTaskOptions, 'anchors' | 'rewardThreshold'>): GymnasiumEvaluationSettings {
  const reference = gymnasiumReference(o);
  if (reference === undefined) throw new Error('gymnasium task: anchors.reference: needed (the return that scores 1)');
  const whose = o.anchors?.reference !== undefined ? "the task's reference return" : "Gymnasium's reward threshold";
  const how = o.anchors?.how ?? `reference: ${whose} (${reference})`;
  return { reference, random: o.anchors?.random, how };
}

/** What the evaluation of each built-in Gymnasium task (`tasks.ts`) knows, by task id. */
export const GYMNASIUM_EVALUATIONS: Readonly<Record<string, GymnasiumEvaluationSettings>> = {
  'gym-cartpole': { reference: 500, how: 'reference: the maximum return (500 steps)' },
  'inverted-pendulum-torch': { reference: 1000, how: 'reference: the maximum return (1000 steps)' },
};

/** A Gymnasium task's evaluation: the greedy policy's mean return over held-out episodes, normalised between random (0) and the reference (1). */
export function gymnasiumEvaluation(def: GymnasiumTaskDef, settings: GymnasiumEvaluationSettings): HiddenEvaluation {
  const g = def.gymnasium;
  const seeds = (): number[] => heldOutSeeds(def.id, def.evaluationEpisodes);
  let anchors: { secret: string; value: Anchors } | null = null;
  return {
    taskId: def.id,
    score(trained) {
      const p = trained as PolicyFile;
      if (p.obsDim !== g.obsDim) throw new Error(`policy.json: obsDim is ${String(p.obsDim)}, the environment observes ${g.obsDim} values`);
      const returns = bridgeEpisodeReturns(new PolicyRunner(p), g, seeds());
      return { raw: returns.reduce((a, b) => a + b, 0) / returns.length, stderr: meanStderr(returns) };
    },
    anchors() {
      const secret = evalSecret();
      if (anchors?.secret !== secret) {
        let random = settings.random;
        let how = settings.how;
        if (random === undefined) {
          const a = g.actionSpace;
          const space = a.type === 'discrete' ? a : { type: 'box' as const, shape: [a.low.length], low: a.low, high: a.high };
          const returns = bridgeEpisodeReturns(randomActor(space, heldOutSeeds(`${def.id}/random`, 1)[0]), g, seeds());
          random = returns.reduce((a, b) => a + b, 0) / returns.length;
          how = `random: a uniformly random policy on the same held-out episodes; ${settings.how}`;
        } else how = `random: the task's random anchor (${random}); ${settings.how}`;
        anchors = { secret, value: { random, reference: settings.reference, how } };
      }
      return anchors.value;
    },
  };
}

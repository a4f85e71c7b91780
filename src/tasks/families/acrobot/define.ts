/**
 * The Acrobot family (held out as a whole: never shown in meta-training): the built-in Acrobot-v1
 * simulator (three discrete torques on the middle joint) with both link lengths and masses drawn
 * inside the simulator's declared ranges, kept only where a scripted policy reaches the goal from
 * every start within the 500-step limit (at the nominal physics and at every corner of the
 * deployment band), a deployment shift of up to ±20% whose exact amount only the hidden evaluation
 * knows, and a budget cap of 20k–50k steps. The brief states the nominal physics, the band and the
 * budget in words.
 */
import { getEnvironment } from '../../../inner/envs/index.js';
import type { Rng } from '../../../util/rng.js';
import { type ControlTaskDef, ppoSpec } from '../../control/define.js';
import { ACROBOT_OBS } from '../../control/observations.js';
import { type ShiftedPhysics, type TaskFamily, drawShiftedPhysics, drawTasks, nominalParams } from '../types.js';
import { bandParams, shiftSentence, simBounds } from '../sim.js';
import { acrobotReference, acrobotScripted } from './scripted.js';

/** The parameter space: nominal ranges (inside the simulator's), shift shares and budget caps. */
export const ACROBOT_SPACE = {
  linkLength1: [0.7, 1.4],
  linkLength2: [0.7, 1.4],
  linkMass1: [0.6, 1.6],
  linkMass2: [0.6, 1.6],
  shifts: [0, 0.1, 0.2],
  budgets: [20_000, 30_000, 40_000, 50_000],
} as const;

const TUNED = ['linkLength1', 'linkLength2', 'linkMass1', 'linkMass2'] as const;

/** The parameters one Acrobot task is made from. */
export type AcrobotParams = ShiftedPhysics;

/**
 * Draws one task's parameters, redrawing physics where the scripted policy misses the goal from
 * some start within 400 steps (at most 100 tries, then the defaults).
 */
export function drawAcrobotParams(rng: Rng): AcrobotParams {
  return drawShiftedPhysics(rng, ACROBOT_SPACE, TUNED, (p) => acrobotScripted(p).worst > -400, { linkLength1: 1, linkLength2: 1, linkMass1: 1, linkMass2: 1 });
}

/** Held-out episodes of a generated task's hidden evaluation (public: the brief states it). */
export const ACROBOT_FAMILY_EPISODES = 15;

/** The public task definition for one set of parameters (what its evaluation knows: `evaluate.ts`). */
export function acrobotTask(id: string, p: AcrobotParams): ControlTaskDef {
  const info = getEnvironment('Acrobot-v1').info;
  const bounds = simBounds(info);
  const n = p.nominal;
  const shiftWords = shiftSentence(p.shift, 'arm', 'four');
  // The baseline trains on the nominal physics, randomised over the stated band when there is one.
  const params = bandParams(TUNED, n, p.shift, bounds);
  // PPO with 8 envs and short rollouts (many updates in a small budget); a linear ARS policy does better, which is the headroom.
  const baseline = ppoSpec(id, {
    numEnvs: 8,
    rolloutSteps: 64,
    epochs: 4,
    minibatches: 4,
    learningRate: 0.001,
    gamma: 0.99,
    gaeLambda: 0.94,
    entropyCoef: 0,
    envSteps: p.budget,
    normalize: true,
  });
  baseline.environment = { ...baseline.environment, params };
  const reference = acrobotReference(n);
  return {
    id,
    title: `Swing up a two-link arm with links of ${n.linkLength1} m and ${n.linkLength2} m`,
    family: 'acrobot-fam',
    split: 'held-out',
    envId: 'Acrobot-v1',
    description:
      'Train a policy for Acrobot-v1 dynamics: two links hang from a fixed joint and only the joint between them is actuated (torque −1, 0 or +1). ' +
      `The physics differ from the simulator defaults: the upper link is ${n.linkLength1} m long and ` +
      `weighs ${n.linkMass1} kg, the lower link is ${n.linkLength2} m long and weighs ${n.linkMass2} kg ` +
      `(each centre of mass at half its link). ${shiftWords} Set environment.params to train on these physics. ` +
      'Swing the free end above the line one unit above the fixed joint (−cos θ1 − cos(θ1 + θ2) > 1) as quickly as possible. ' +
      `At most ${p.budget.toLocaleString('en-US')} environment steps of experience. Episodes last at most 500 steps.`,
    observation: ACROBOT_OBS,
    actions: 'discrete: 0 applies −1 torque, 1 none, 2 +1 torque to the middle joint',
    rewardWords: 'the environment reward: −1 per step until the goal, 0 on reaching it',
    params: nominalParams(info, TUNED, n),
    algorithms: ['ppo', 'ars', 'dqn', 'reinforce'],
    maxEnvSteps: p.budget,
    maxWallSeconds: p.budget <= 20_000 ? 120 : 300,
    evaluationEpisodes: ACROBOT_FAMILY_EPISODES,
    metric:
      'mean undiscounted return (−1 per step until the goal, at most 500 steps) of the greedy policy on the deployment physics over held-out episodes; ' +
      `normalised so that a uniformly random policy scores 0 and ${reference} (a scripted energy-pumping policy on the stated physics) scores 1`,
    baseline,
  };
}

/** The Acrobot family (held out). */
export const acrobotFamily: TaskFamily = {
  name: 'acrobot',
  kind: 'control',
  split: 'held-out',
  description:
    'Acrobot swing-up on the built-in simulator with drawn link lengths and masses (the goal ' +
    'kept reachable), a hidden deployment shift of up to ±20% and a budget cap of 20k–50k steps',
  generate: drawTasks('acrobot', 0xac0b, 'control-sim', drawAcrobotParams, acrobotTask),
};

/**
 * The MountainCar family: the built-in MountainCar-v0 simulator (three discrete actions) with the
 * engine force and gravity drawn inside the simulator's declared ranges, kept only where a scripted
 * policy reaches the flag from every start well within the 200-step limit, and a budget cap of
 * 10k–50k steps. The environment reward is sparse (−1 per step), so reward shaping is what makes
 * a small budget pay off. The brief states the physics and the budget in words; no deployment shift.
 */
import { getEnvironment } from '../../../inner/envs/index.js';
import type { PhysParams } from '../../../inner/envs/types.js';
import type { Rng } from '../../../util/rng.js';
import { type ControlTaskDef, ppoSpec } from '../../control/define.js';
import { MOUNTAIN_CAR_OBS } from '../../control/observations.js';
import { type TaskFamily, drawTasks, nominalParams, sig } from '../types.js';
import { mountainCarReference, mountainCarScripted } from './scripted.js';

/** The parameter space: physics ranges (inside the simulator's) and budget caps. */
export const MOUNTAIN_CAR_SPACE = {
  force: [0.0008, 0.0015],
  gravity: [0.0018, 0.0032],
  budgets: [10_000, 20_000, 30_000, 50_000],
} as const;

const TUNED = ['force', 'gravity'] as const;

/** The parameters one MountainCar task is made from. */
export interface MountainCarParams {
  physics: PhysParams;
  budget: number;
}

/**
 * Draws one task's parameters, redrawing physics where the scripted policy misses the flag or
 * needs over 180 steps from some start (at most 100 tries, then the defaults).
 */
export function drawMountainCarParams(rng: Rng): MountainCarParams {
  const budget = MOUNTAIN_CAR_SPACE.budgets[rng.int(MOUNTAIN_CAR_SPACE.budgets.length)];
  for (let tries = 0; tries < 100; tries++) {
    const physics: PhysParams = {};
    for (const name of TUNED) physics[name] = sig(rng.uniform(MOUNTAIN_CAR_SPACE[name][0], MOUNTAIN_CAR_SPACE[name][1]));
    if (mountainCarScripted(physics).worst > -180) return { physics, budget };
  }
  return { physics: { force: 0.001, gravity: 0.0025 }, budget };
}

/** Held-out episodes of a generated task's hidden evaluation (public: the brief states it). */
export const MOUNTAIN_CAR_FAMILY_EPISODES = 20;

/** The public task definition for one set of parameters (what its evaluation knows: `evaluate.ts`). */
export function mountainCarTask(id: string, p: MountainCarParams): ControlTaskDef {
  const info = getEnvironment('MountainCar-v0').info;
  const n = p.physics;
  // PPO on the plain sparse reward (as the hand-written mountaincar-reach): it learns a little; shaping is the headroom.
  const baseline = ppoSpec(id, { numEnvs: 16, rolloutSteps: 16, epochs: 4, minibatches: 4, entropyCoef: 0, envSteps: p.budget, normalize: true });
  baseline.environment = { ...baseline.environment, params: { ...n } };
  const reference = mountainCarReference(n);
  return {
    id,
    title: `Drive a car with engine force ${n.force} up a hill under gravity ${n.gravity}`,
    family: 'mountaincar-fam',
    split: 'train',
    envId: 'MountainCar-v0',
    description:
      'Train a policy for MountainCar-v0 dynamics with physics that differ from the ' +
      `simulator defaults: the engine changes the velocity by ${n.force} per step ` +
      `and gravity by ${n.gravity}·cos(3·position) per step. A car in a valley must ` +
      'reach the flag on the right hill (position ≥ 0.5), but its engine is too weak to ' +
      'climb directly; it has to build momentum. The environment reward is −1 per step, so nothing distinguishes a near miss from standing still. ' +
      'Set environment.params to train on these physics (the deployed car has exactly ' +
      `them). At most ${p.budget.toLocaleString('en-US')} environment steps of experience. ` +
      'Episodes last at most 200 steps.',
    observation: MOUNTAIN_CAR_OBS,
    actions: 'discrete: 0 accelerates left, 1 does nothing, 2 accelerates right',
    rewardWords: 'the environment reward: −1 per step',
    params: nominalParams(info, TUNED, n),
    algorithms: ['ppo', 'ars', 'dqn', 'reinforce'],
    maxEnvSteps: p.budget,
    maxWallSeconds: p.budget <= 20_000 ? 120 : 300,
    evaluationEpisodes: MOUNTAIN_CAR_FAMILY_EPISODES,
    metric:
      'mean undiscounted return (−1 per step until the flag, at most 200 steps) of the greedy policy on the stated physics over held-out episodes; ' +
      `normalised so that a uniformly random policy scores 0 and ${reference} ` +
      '(a scripted near-optimal policy: swing left, then accelerate the way the car moves) scores 1',
    baseline,
  };
}

/** The MountainCar family. */
export const mountainCarFamily: TaskFamily = {
  name: 'mountain-car',
  kind: 'control',
  split: 'train',
  description:
    'MountainCar on the built-in simulator with drawn engine force and gravity (the flag kept ' +
    'reachable), a sparse −1-per-step reward where shaping pays off, and a budget cap of 10k–50k steps',
  generate: drawTasks('mountain-car', 0x3c4a, 'control-sim', drawMountainCarParams, mountainCarTask),
};

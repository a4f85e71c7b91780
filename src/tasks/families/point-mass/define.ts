/**
 * The point-mass family (held out as a whole: never shown in meta-training): the built-in
 * PointMass-v0 simulator, a puck on a square table pushed by a two-dimensional continuous force
 * to a target point that changes every episode and is part of the observation (its offset from
 * the puck). No train family has this kind of problem: two continuous action dimensions at once, a
 * goal the policy reads from its input (goal-conditioned reaching) rather than one fixed state to
 * reach or keep, and translation with drag rather than rotation under gravity. The
 * puck's mass, its drag and the largest force are drawn inside the simulator's declared ranges,
 * kept only where a scripted controller brings the puck to the target and holds it there from
 * every start (at the nominal physics and at every corner of the deployment band), with a
 * deployment shift of up to ±20% whose exact amount only the hidden evaluation knows, and a budget
 * cap of 20k–60k steps. The brief states the nominal physics, the band and the budget in words.
 */
import { getEnvironment } from '../../../inner/envs/index.js';
import type { Rng } from '../../../util/rng.js';
import { type ControlTaskDef, ppoSpec } from '../../control/define.js';
import { POINT_MASS_OBS } from '../../control/observations.js';
import { type ShiftedPhysics, type TaskFamily, drawShiftedPhysics, drawTasks, nominalParams, sig } from '../types.js';
import { bandParams, shiftSentence, simBounds } from '../sim.js';
import { pointMassReference, pointMassScripted } from './scripted.js';

/** The parameter space: nominal ranges (inside the simulator's), shift shares and budget caps. */
export const POINT_MASS_SPACE = {
  mass: [0.5, 2.5],
  damping: [0.1, 1.2],
  force: [0.5, 2],
  shifts: [0, 0.1, 0.2],
  budgets: [20_000, 30_000, 40_000, 60_000],
} as const;

const TUNED = ['mass', 'damping', 'force'] as const;

/** The parameters one point-mass task is made from. */
export type PointMassParams = ShiftedPhysics;

/** Draws one task's parameters, redrawing physics where the scripted controller cannot hold the puck at the target (at most 100 tries, then the defaults). */
export function drawPointMassParams(rng: Rng): PointMassParams {
  return drawShiftedPhysics(rng, POINT_MASS_SPACE, TUNED, (p) => pointMassScripted(p).feasible, { mass: 1, damping: 0.5, force: 1 });
}

/** Held-out episodes of a generated task's hidden evaluation (public: the brief states it). */
export const POINT_MASS_FAMILY_EPISODES = 20;

/** The public task definition for one set of parameters (what its evaluation knows: `evaluate.ts`). */
export function pointMassTask(id: string, p: PointMassParams): ControlTaskDef {
  const info = getEnvironment('PointMass-v0').info;
  const bounds = simBounds(info);
  const n = p.nominal;
  const shiftWords = shiftSentence(p.shift, 'puck', 'three');
  // The baseline trains on the nominal physics, randomised over the stated band when there is one.
  const params = bandParams(TUNED, n, p.shift, bounds);
  // PPO with short rollouts over 8 envs (many updates within a small budget), observations normalised.
  const baseline = ppoSpec(id, {
    numEnvs: 8,
    rolloutSteps: 128,
    epochs: 10,
    minibatches: 8,
    learningRate: 0.003,
    gamma: 0.95,
    gaeLambda: 0.95,
    entropyCoef: 0,
    envSteps: p.budget,
    normalize: true,
  });
  baseline.environment = { ...baseline.environment, params };
  const reference = pointMassReference(n);
  const accel = sig(n.force / n.mass, 2);
  const topSpeed = Math.min(2, sig(n.force / (n.mass * n.damping), 2));
  return {
    id,
    title: `Steer a ${n.mass} kg puck to a target with at most ${n.force} N per axis`,
    family: 'point-mass-fam',
    split: 'held-out',
    envId: 'PointMass-v0',
    description:
      'Train a policy for PointMass-v0: a puck slides on a flat square table (x and y from −1 ' +
      'to 1 m, walls at the edges stop it) and is pushed by a force along both axes at once. ' +
      'Each episode puts the puck at rest at a random point and draws a new target point; the policy ' +
      'sees where the target lies from the puck (dx, dy) and must bring the puck there and keep it there. ' +
      `The physics differ from the simulator defaults: the puck weighs ${n.mass} kg, drag slows it by ` +
      `${n.damping} per second per m/s of speed, and the largest force is ${n.force} N along each axis ` +
      `(an acceleration of at most ${accel} m/s² per axis; top speed about ${topSpeed} m/s). ${shiftWords} Set environment.params to train on these physics. ` +
      `At most ${p.budget.toLocaleString('en-US')} environment steps of experience. Episodes last 200 steps (10 s) and never end early.`,
    observation: POINT_MASS_OBS,
    actions: 'continuous: two values in [−1, 1], the force along x and along y as shares of the largest force',
    rewardWords:
      'the environment reward: −(distance from the puck to the target in m + ' +
      '0.05·(force_x² + force_y²) in shares of the largest force), between about −2.9 and 0',
    params: nominalParams(info, TUNED, n),
    algorithms: ['ppo'],
    maxEnvSteps: p.budget,
    maxWallSeconds: p.budget <= 30_000 ? 120 : 300,
    evaluationEpisodes: POINT_MASS_FAMILY_EPISODES,
    metric:
      'mean undiscounted return over 200 steps of the trained policy acting greedily ' +
      'on the deployment physics over held-out episodes (new starts and targets); ' +
      `normalised so that a uniformly random policy scores 0 and ${reference} (a scripted controller that knows the stated physics) scores 1`,
    baseline,
  };
}

/** The point-mass family (held out). */
export const pointMassFamily: TaskFamily = {
  name: 'point-mass',
  kind: 'control',
  split: 'held-out',
  description:
    'goal-conditioned reaching with a two-dimensional continuous force on a built-in point-mass simulator, with drawn mass, ' +
    'drag and force (the target kept reachable), a hidden deployment shift of up to ±20% and a budget cap of 20k–60k steps',
  generate: drawTasks('point-mass', 0x9017, 'control-sim', drawPointMassParams, pointMassTask),
};

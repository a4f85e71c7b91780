/**
 * The Pendulum family: the built-in Pendulum-v1 simulator (continuous torque in [−2, 2]) with
 * gravity, mass and length drawn inside the simulator's declared ranges, kept only where a scripted
 * swing-up controller still swings the pendulum up and holds it with the torque limit (at the
 * nominal physics and at every corner of the deployment band), a deployment shift of up to ±20%
 * whose exact amount only the hidden evaluation knows, and a budget cap of 20k–60k steps.
 * The brief states the nominal physics, the shift band and the budget in words.
 */
import { getEnvironment } from '../../../inner/envs/index.js';
import { PENDULUM_CONSTANTS } from '../../../inner/envs/pendulum.js';
import type { Rng } from '../../../util/rng.js';
import { type ControlTaskDef, ppoSpec } from '../../control/define.js';
import { PENDULUM_OBS } from '../../control/observations.js';
import { type ShiftedPhysics, type TaskFamily, drawShiftedPhysics, drawTasks, nominalParams } from '../types.js';
import { bandParams, shiftSentence, simBounds } from '../sim.js';
import { pendulumReference, pendulumScripted } from './scripted.js';

/** The parameter space: nominal ranges (inside the simulator's), shift shares and budget caps. */
export const PENDULUM_SPACE = {
  gravity: [6, 13],
  mass: [0.6, 1.6],
  length: [0.6, 1.4],
  shifts: [0, 0.1, 0.2],
  budgets: [20_000, 30_000, 40_000, 60_000],
} as const;

const TUNED = ['gravity', 'mass', 'length'] as const;

/** The parameters one Pendulum task is made from. */
export type PendulumParams = ShiftedPhysics;

/** Draws one task's parameters, redrawing physics where the scripted controller cannot swing up (at most 100 tries, then the defaults). */
export function drawPendulumParams(rng: Rng): PendulumParams {
  return drawShiftedPhysics(rng, PENDULUM_SPACE, TUNED, (p) => pendulumScripted(p).feasible, { gravity: 10, mass: 1, length: 1 });
}

/** Held-out episodes of a generated task's hidden evaluation (public: the brief states it). */
export const PENDULUM_FAMILY_EPISODES = 15;

/** The public task definition for one set of parameters (what its evaluation knows: `evaluate.ts`). */
export function pendulumTask(id: string, p: PendulumParams): ControlTaskDef {
  const info = getEnvironment('Pendulum-v1').info;
  const bounds = simBounds(info);
  const n = p.nominal;
  const shiftWords = shiftSentence(p.shift, 'pendulum', 'three');
  // The baseline trains on the nominal physics, randomised over the stated band when there is one.
  const params = bandParams(TUNED, n, p.shift, bounds);
  // PPO with short rollouts over 8 envs (many updates within a small budget), γ 0.95, the reward scaled by 1/10.
  const baseline = ppoSpec(id, {
    numEnvs: 8,
    rolloutSteps: 128,
    epochs: 10,
    minibatches: 8,
    learningRate: 0.001,
    gamma: 0.95,
    gaeLambda: 0.95,
    entropyCoef: 0,
    envSteps: p.budget,
    expression: 'r / 10',
  });
  baseline.environment = { ...baseline.environment, params };
  const reference = pendulumReference(n);
  // Holding the pendulum horizontal takes m·g·l/2 of torque: above 2 N·m it has to be swung up.
  const lift =
    (n.mass * n.gravity * n.length) / 2 > PENDULUM_CONSTANTS.maxTorque ? 'too weak to lift it directly: it has to be swung up' : 'enough to lift it slowly';
  return {
    id,
    title: `Swing up a ${n.length} m pendulum of ${n.mass} kg under gravity ${n.gravity} m/s²`,
    family: 'pendulum-fam',
    split: 'train',
    envId: 'Pendulum-v1',
    description:
      `Train a policy for Pendulum-v1 dynamics whose physics differ from the simulator defaults: the pendulum is ${n.length} m long and weighs ${n.mass} kg, ` +
      `and gravity is ${n.gravity} m/s². It starts at a random angle and speed; apply a continuous torque (at most 2 N·m either way, ${lift}) ` +
      `to swing it up and keep it upright with little speed and effort. ${shiftWords} Set environment.params to train on these physics. ` +
      `At most ${p.budget.toLocaleString('en-US')} environment steps of experience. Episodes last 200 steps and never end early.`,
    observation: PENDULUM_OBS,
    actions: 'continuous: one torque in [−2, 2] N·m',
    rewardWords: 'the environment reward: −(angle² + 0.1·angular velocity² + 0.001·torque²), between about −16.3 and 0',
    params: nominalParams(info, TUNED, n),
    algorithms: ['ppo'],
    maxEnvSteps: p.budget,
    maxWallSeconds: p.budget <= 30_000 ? 120 : 300,
    evaluationEpisodes: PENDULUM_FAMILY_EPISODES,
    metric:
      'mean undiscounted return over 200 steps of the trained policy acting greedily on the deployment physics over held-out episodes; ' +
      `normalised so that a uniformly random policy scores 0 and ${reference} (a scripted swing-up controller on the stated physics) scores 1`,
    baseline,
  };
}

/** The Pendulum family. */
export const pendulumFamily: TaskFamily = {
  name: 'pendulum',
  kind: 'control',
  split: 'train',
  description:
    'Pendulum swing-up on the built-in simulator with drawn gravity, mass and length (swing-up ' +
    'kept feasible), a hidden deployment shift of up to ±20% and a budget cap of 20k–60k steps',
  generate: drawTasks('pendulum', 0x9e4d, 'control-sim', drawPendulumParams, pendulumTask),
};

/**
 * The CartPole family: the built-in simulator's physics (pole length and mass, cart mass, push
 * magnitude) drawn from a seeded space inside the simulator's declared ranges, a deployment shift
 * of up to ±30% whose exact amount only the hidden evaluation knows, and a varied budget cap.
 * The brief states the nominal physics, the shift band and the budget in words.
 */
import { getEnvironment } from '../../../inner/envs/index.js';
import type { PhysParams } from '../../../inner/envs/types.js';
import type { Rng } from '../../../util/rng.js';
import { type ControlTaskDef, ppoSpec } from '../../control/define.js';
import { CARTPOLE_OBS } from '../../control/observations.js';
import { type TaskFamily, drawTasks, nominalParams, sig } from '../types.js';
import { bandParams, shiftSentence, simBounds } from '../sim.js';

/** The parameter space: nominal ranges (inside the simulator's), shift shares and budget caps. */
export const CARTPOLE_SPACE = {
  poleLength: [0.25, 1.2],
  massPole: [0.05, 0.5],
  massCart: [0.5, 2.0],
  forceMag: [5, 20],
  shifts: [0, 0.1, 0.2, 0.3],
  budgets: [10_000, 20_000, 50_000, 100_000],
} as const;

const TUNED = ['poleLength', 'massPole', 'massCart', 'forceMag'] as const;

/** The parameters one CartPole task is made from. */
export interface CartpoleParams {
  nominal: PhysParams;
  shift: number;
  budget: number;
}

/** Draws one task's parameters. */
export function drawCartpoleParams(rng: Rng): CartpoleParams {
  const nominal: PhysParams = {};
  for (const name of TUNED) nominal[name] = sig(rng.uniform(CARTPOLE_SPACE[name][0], CARTPOLE_SPACE[name][1]));
  return {
    nominal,
    shift: CARTPOLE_SPACE.shifts[rng.int(CARTPOLE_SPACE.shifts.length)],
    budget: CARTPOLE_SPACE.budgets[rng.int(CARTPOLE_SPACE.budgets.length)],
  };
}

/** Held-out episodes of a generated task's hidden evaluation (public: the brief states it). */
export const CARTPOLE_FAMILY_EPISODES = 30;

/** The public task definition for one set of parameters (what its evaluation knows: `evaluate.ts`). */
export function cartpoleTask(id: string, p: CartpoleParams): ControlTaskDef {
  const info = getEnvironment('CartPole-v1').info;
  const bounds = simBounds(info);
  const n = p.nominal;
  const shiftWords = shiftSentence(p.shift, 'cart', 'four');
  // The baseline trains on the nominal physics, randomised over the stated band when there is one.
  const params = bandParams(TUNED, n, p.shift, bounds);
  const baseline = ppoSpec(id, {
    numEnvs: 8,
    rolloutSteps: 32,
    epochs: 20,
    minibatches: 1,
    learningRate: 0.001,
    gamma: 0.98,
    gaeLambda: 0.8,
    entropyCoef: 0,
    envSteps: p.budget / 2,
  });
  baseline.environment = { ...baseline.environment, params };
  return {
    id,
    title: `Balance a pole of half-length ${n.poleLength} m on a cart pushed with ${n.forceMag} N`,
    family: 'cartpole-fam',
    split: 'train',
    envId: 'CartPole-v1',
    description:
      `Train a policy that keeps a pole balanced upright on a cart (CartPole-v1 dynamics) whose physics differ from the simulator defaults: ` +
      `the pole's half-length is ${n.poleLength} m and its mass ${n.massPole} kg, the cart's mass is ${n.massCart} kg and each push is ${n.forceMag} N. ` +
      `${shiftWords} Set environment.params to train on these physics. At most ${p.budget.toLocaleString('en-US')} environment steps of experience. ` +
      'An episode ends when the pole tilts more than 12 degrees, the cart leaves the track (|x| > 2.4) or after 500 steps.',
    observation: CARTPOLE_OBS,
    actions: `discrete: 0 pushes the cart left, 1 pushes it right (force ${n.forceMag} N on deployment${p.shift ? ', within the stated band' : ''})`,
    rewardWords: 'the environment reward: 1 for every step',
    params: nominalParams(info, TUNED, n),
    algorithms: ['ppo', 'ars', 'dqn', 'reinforce'],
    maxEnvSteps: p.budget,
    maxWallSeconds: p.budget <= 20_000 ? 120 : 300,
    evaluationEpisodes: CARTPOLE_FAMILY_EPISODES,
    metric:
      'mean undiscounted return (steps balanced, up to 500) of the trained policy acting greedily on the deployment physics over held-out episodes; ' +
      'normalised so that a uniformly random policy scores 0 and 500 scores 1',
    baseline,
  };
}

/** The CartPole family. */
export const cartpoleFamily: TaskFamily = {
  name: 'cartpole',
  kind: 'control',
  split: 'train',
  description:
    'CartPole on the built-in simulator with drawn pole length and mass, cart mass and ' +
    'push, a hidden deployment shift of up to ±30% and a budget cap of 10k–100k steps',
  generate: drawTasks('cartpole', 0xca27, 'control-sim', drawCartpoleParams, cartpoleTask),
};

import type { TaskBrief } from '../../spec/brief.js';
import type { JobSpecInput } from '../../spec/schema.js';

/** What the agent sees of cartpole-balance. */
export const brief: TaskBrief = {
  id: 'cartpole-balance',
  title: 'Balance a pole on a cart',
  family: 'cartpole',
  kind: 'control',
  split: 'train',
  data: 'simulated',
  description:
    'Train a policy that keeps a pole balanced upright on a cart for as long as possible (CartPole-v1). ' +
    'The cart moves on a frictionless track; each step the policy pushes it left or right. An episode ends ' +
    'when the pole tilts more than 12 degrees, the cart leaves the track (|x| > 2.4) or after 500 steps.',
  environment: {
    id: 'CartPole-v1',
    observation: [
      { name: 'x', description: 'cart position (m), 0 at the centre, episode ends beyond ±2.4' },
      { name: 'x_dot', description: 'cart velocity (m/s)' },
      { name: 'theta', description: 'pole angle from upright (rad), episode ends beyond ±0.2095' },
      { name: 'theta_dot', description: 'pole angular velocity (rad/s)' },
    ],
    actions: 'discrete: 0 pushes the cart left, 1 pushes it right (force 10 N)',
    params: [
      { name: 'poleLength', default: 0.5, min: 0.25, max: 1.0, description: 'half the length of the pole (m)' },
      { name: 'massPole', default: 0.1, min: 0.05, max: 0.5, description: 'mass of the pole (kg)' },
      { name: 'massCart', default: 1.0, min: 0.5, max: 2.0, description: 'mass of the cart (kg)' },
      { name: 'forceMag', default: 10, min: 5, max: 15, description: 'magnitude of each push (N)' },
    ],
    wrappers: ['normalize-observation'],
  },
  rewardVariables: [
    { name: 'x', description: 'cart position after the step' },
    { name: 'x_dot', description: 'cart velocity after the step' },
    { name: 'theta', description: 'pole angle after the step' },
    { name: 'theta_dot', description: 'pole angular velocity after the step' },
    { name: 'r', description: 'the environment reward: 1 for every step' },
    { name: 't', description: 'steps taken in this episode, 1 on the first step' },
    { name: 'done', description: '1 on the step where the pole fell or the cart left the track, else 0' },
  ],
  demonstrations: [],
  algorithms: ['ppo', 'ars'],
  budget: { maxEnvSteps: 100_000, maxWallSeconds: 300 },
  metric:
    'mean undiscounted return (steps balanced, up to 500) of the trained policy acting greedily on the default physics, ' +
    'over held-out episodes; normalised so that a uniformly random policy scores 0 and 500 scores 1',
};

/** The practitioner's default: rl-baselines3-zoo's PPO hyperparameters for CartPole-v1. */
export const baseline: JobSpecInput = {
  task: 'cartpole-balance',
  environment: { params: {}, wrappers: [], numEnvs: 8 },
  reward: { expression: 'r' },
  dataset: { demonstrations: null },
  model: { hidden: [64, 64], activation: 'tanh' },
  algorithm: {
    name: 'ppo',
    learningRate: 0.001,
    annealLr: true,
    gamma: 0.98,
    gaeLambda: 0.8,
    clip: 0.2,
    epochs: 20,
    minibatches: 1,
    rolloutSteps: 32,
    entropyCoef: 0,
    valueCoef: 0.5,
    maxGradNorm: 0.5,
    normalizeAdvantages: true,
  },
  budget: { envSteps: 100_000, targetReturn: null },
  seed: 1,
};

import type { TaskBrief } from '../../spec/brief.js';
import type { JobSpecInput } from '../../spec/schema.js';
import { baseline as balanceBaseline, brief as balanceBrief } from '../cartpole-balance/brief.js';

/** CartPole under a tight compute budget: 10,000 env steps, where a cheap algorithm pays off. */
export const brief: TaskBrief = {
  ...balanceBrief,
  id: 'cartpole-short',
  title: 'Balance a pole on a cart with a small budget',
  split: 'held-out',
  description:
    'Train a policy that keeps a pole balanced upright on a cart (CartPole-v1), but with at most 10,000 ' +
    'environment steps of experience. Each step the policy pushes the cart left or right. An episode ends when ' +
    'the pole tilts more than 12 degrees, the cart leaves the track (|x| > 2.4) or after 500 steps.',
  budget: { maxEnvSteps: 10_000, maxWallSeconds: 120 },
};

/** The practitioner's PPO default (rl-baselines3-zoo), cut to the task's budget. */
export const baseline: JobSpecInput = {
  ...balanceBaseline,
  task: 'cartpole-short',
  budget: { envSteps: 10_000, targetReturn: null },
};

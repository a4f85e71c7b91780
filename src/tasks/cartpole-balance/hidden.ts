import { controlHiddenEvaluation } from '../control-eval.js';

/** cartpole-balance's hidden evaluation: greedy policy, default physics, 50 held-out episodes. */
export const hidden = controlHiddenEvaluation({
  taskId: 'cartpole-balance',
  envId: 'CartPole-v1',
  episodes: 50,
  reference: 500,
  referenceHow: 'the maximum return (500 steps)',
});

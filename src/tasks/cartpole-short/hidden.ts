import { controlHiddenEvaluation } from '../control-eval.js';

/** cartpole-short's hidden evaluation: greedy policy, default physics, 50 held-out episodes. */
export const hidden = controlHiddenEvaluation({
  taskId: 'cartpole-short',
  envId: 'CartPole-v1',
  episodes: 50,
  reference: 500,
  referenceHow: 'the maximum return (500 steps)',
});

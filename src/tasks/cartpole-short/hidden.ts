import { PolicyRunner } from '../../inner/policy.js';
import { meanEpisodeReturn, randomActor } from '../control-eval.js';
import type { Anchors, HiddenEvaluation } from '../hidden-types.js';
import { heldOutSeeds } from '../secret.js';

const EPISODES = 50;
let anchors: Anchors | null = null;

/** cartpole-short's hidden evaluation: greedy policy, default physics, 50 held-out episodes. */
export const hidden: HiddenEvaluation = {
  taskId: 'cartpole-short',
  score(policy) {
    return meanEpisodeReturn(new PolicyRunner(policy), 'CartPole-v1', heldOutSeeds('cartpole-short', EPISODES));
  },
  anchors() {
    anchors ??= {
      random: meanEpisodeReturn(randomActor(2, heldOutSeeds('cartpole-short/random', 1)[0]), 'CartPole-v1', heldOutSeeds('cartpole-short', EPISODES)),
      reference: 500,
      how: 'random: a uniformly random policy on the same held-out episodes; reference: the maximum return (500 steps)',
    };
    return anchors;
  },
};

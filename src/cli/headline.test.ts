import test from 'node:test';
import assert from 'node:assert/strict';
import { learningHeadline } from './headline.js';

const it = (iteration: number, meanNormalized: number | null) => ({ iteration, meanReward: 0, meanNormalized, bestNormalized: meanNormalized });

test('the headline compares the first and last scored iterations against the baseline specs', () => {
  const [head, meaning] = learningHeadline({ iterations: [it(0, 0.5), it(1, 0.6), it(2, 0.7)], baselines: { 'cars-mpg': 0.1 } }, 'improvement', 0.5);
  assert.equal(head, "the agent got better: its jobs' mean hidden score went 0.500 (iteration 1) → 0.700 (iteration 3); baseline spec: cars-mpg 0.100");
  const rule = String.raw`outer reward: .*mean over the harness's seeds, \+0.5 when a score confirmed on the harness's seeds beats the best so far`;
  assert.match(meaning, new RegExp(String.raw`0 = a trivial model, 1 = the task's reference; ${rule}`));
  const noise = { 'cars-mpg': { mean: 0.1, seeds: 5, sd: 0.02, spread: 0.05, evalSe: 0.03 } };
  const [withNoise] = learningHeadline({ iterations: [it(0, 0.5), it(2, 0.7)], baselines: { 'cars-mpg': 0.1 }, noise }, 'improvement', 0.5);
  assert.match(withNoise, /baseline spec: cars-mpg 0.100 ± 0.020 \(mean ± sd over 5 harness seeds\)$/);
});

test('the headline says so when the agent did not get better, and skips iterations without a score', () => {
  const [head] = learningHeadline({ iterations: [it(0, 0.7), it(1, null), it(2, 0.6)], baselines: { a: 0.2 } }, 'improvement', 0.5);
  assert.match(head, /^the agent did not get better: .*0.700 \(iteration 1\) → 0.600 \(iteration 3\)/);
  const [one, meaning] = learningHeadline({ iterations: [it(0, 0.7)], baselines: { a: 0.2 } }, 'cost', 0.25);
  assert.equal(one, "baseline spec's hidden score: a 0.200");
  assert.match(meaning, /minus 0.25 × the share of the compute cap/);
});

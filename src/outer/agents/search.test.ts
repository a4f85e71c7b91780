import test from 'node:test';
import assert from 'node:assert/strict';
import { SearchAgent } from './search.js';
import { BaselineAgent } from './baseline.js';
import { buildHeads } from './space.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { validateSpec } from '../../inner/spec-check.js';
import { Rng } from '../../util/rng.js';

const { brief } = getPublicTask('cartpole-balance');

test('model-based search starts at random and then concentrates on what scored well', async () => {
  const agent = new SearchAgent();
  const rng = new Rng(3);
  const algoIndex = buildHeads(brief).findIndex((h) => h.name === 'algorithm');
  const ars = (buildHeads(brief)[0].options as string[]).indexOf('ars');
  const history: { spec: unknown; reward: number | null; trace: unknown }[] = [];
  for (let i = 0; i < 24; i++) {
    const p = await agent.propose(brief, { rng, iteration: 0, history });
    assert.ok(validateSpec(p.spec, brief).ok);
    const choice = (p.trace as { choice: number[] }).choice;
    history.push({ spec: p.spec, reward: choice[algoIndex] === ars ? 1 : 0, trace: p.trace });
  }
  let hits = 0;
  for (let i = 0; i < 20; i++) {
    const p = await agent.propose(brief, { rng, iteration: 1, history });
    if ((p.trace as { choice: number[] }).choice[algoIndex] === ars) hits++;
  }
  assert.ok(
    hits >= 2 * (20 / brief.algorithms.length),
    `${hits} of 20 proposals chose the rewarded algorithm (uniform: about ${20 / brief.algorithms.length})`,
  );
});

test('the baseline agent proposes the task baseline with a fresh seed', async () => {
  const a = new BaselineAgent();
  const rng = new Rng(1);
  const p = await a.propose(brief, { rng, iteration: 0, history: [] });
  const q = await a.propose(brief, { rng, iteration: 0, history: [] });
  const { baseline } = getPublicTask('cartpole-balance');
  assert.deepEqual({ ...(p.spec as object), seed: baseline.seed }, baseline);
  assert.notEqual((p.spec as { seed: number }).seed, (q.spec as { seed: number }).seed);
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControllerPrior } from './agents/prior.js';
import type { TransferOptions } from './transfer-options.js';
import { REPETITION_FILE, readRecordedRepetition, recordedRepetition, repetitionKey } from './transfer-repetition.js';

const options: TransferOptions = {
  trainTasks: ['iris-species', 'cartpole'],
  heldOutTasks: ['wine-class'],
  iterations: 3,
  group: 4,
  seed: 1,
  compare: 'corpus',
  corpus: { on: 'held-out', trainPerPackage: 8, perPackage: 8, dir: '/somewhere' },
};
const prior = (w: number): ControllerPrior => ({
  format: 'rrl-controller-prior/1',
  provenance: {} as ControllerPrior['provenance'],
  state: { options: {}, weights: [[w, 2]] },
});
const ctx: Parameters<typeof repetitionKey>[0] = { options, prior: null, init: null, reference: prior(1) };

test('a repetition key changes with every input its figures depend on, and not with paths, seeds or what only reports', () => {
  const key = repetitionKey(ctx);
  const changed: [string, Partial<typeof ctx>][] = [
    ['train tasks', { options: { ...options, trainTasks: ['iris-species'] } }],
    ['held-out tasks', { options: { ...options, heldOutTasks: ['wine-class', 'digits'] } }],
    ['iterations', { options: { ...options, iterations: 4 } }],
    ['group', { options: { ...options, group: 8 } }],
    ['compare', { options: { ...options, compare: 'random' } }],
    ['confirmation', { options: { ...options, confirmPicks: false } }],
    ['reward rule', { options: { ...options, reward: { rule: 'improvement', lambda: 0.5 } } }],
    ['anchor', { options: { ...options, anchor: 0 } }],
    ['tasks per iteration', { options: { ...options, tasksPerIteration: 12 } }],
    ['the reference prior', { reference: prior(2) }],
    ['a prior instead of meta-training', { prior: prior(1) }],
    ['a warm start', { init: prior(1) }],
  ];
  for (const [what, change] of changed) assert.notEqual(repetitionKey({ ...ctx, ...change }), key, what);
  const same = { ...options, seed: 9, secrets: 2, python: '/usr/bin/python3', corpus: { ...options.corpus!, dir: '/elsewhere' } };
  assert.equal(repetitionKey({ ...ctx, options: same, reference: prior(1) }), key, 'seed, secrets, paths and prior objects are not inputs of one repetition');
});

test('a recorded repetition is reused only when it is finished and is this one: its key, seed and secret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-repetition-'));
  try {
    const rep = { seed: 1, secret: { index: 0, evalId: 'abc', tag: '' } };
    assert.equal(recordedRepetition(dir, 'k', rep), null, 'nothing recorded');
    const recorded = { seed: 1, secret: 0, evalId: 'abc', curve: [], rows: [], heldOut: {}, confirmed: null, wallSeconds: 12, key: 'k' };
    writeFileSync(join(dir, REPETITION_FILE), JSON.stringify(recorded));
    assert.deepEqual(recordedRepetition(dir, 'k', rep), recorded);
    assert.equal(recordedRepetition(dir, 'other', rep), null, 'other inputs');
    assert.equal(recordedRepetition(dir, 'k', { ...rep, seed: 2 }), null, 'another seed');
    assert.equal(recordedRepetition(dir, 'k', { ...rep, secret: { ...rep.secret, evalId: 'def' } }), null, 'another secret');
    for (const broken of ['{', 'null', '[]', JSON.stringify({ ...recorded, wallSeconds: -1 }), JSON.stringify({ ...recorded, rows: undefined })]) {
      writeFileSync(join(dir, REPETITION_FILE), broken);
      assert.equal(readRecordedRepetition(dir), null, broken);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

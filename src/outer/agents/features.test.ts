import test from 'node:test';
import assert from 'node:assert/strict';
import { CONCEPTS, FEATURE_DIM, briefFeatures, discreteActions } from './features.js';
import { getPublicTask, listTasks } from '../../tasks/briefs.js';
import { FAMILIES, registerFamilyTasks } from '../../tasks/families/index.js';

const brief = (id: string) => getPublicTask(id).brief;
const concept = (id: string, name: string): number => briefFeatures(brief(id))[48 + CONCEPTS.findIndex(([n]) => n === name)];
const cosine = (a: Float32Array, b: Float32Array): number => {
  let ab = 0,
    aa = 0,
    bb = 0;
  for (let i = 0; i < a.length; i++) [ab, aa, bb] = [ab + a[i] * b[i], aa + a[i] * a[i], bb + b[i] * b[i]];
  return ab / Math.sqrt(aa * bb);
};

test('every brief, built-in or drawn from a family, gives FEATURE_DIM finite features of moderate size', () => {
  for (const name of Object.keys(FAMILIES)) registerFamilyTasks(name, 4, 3);
  for (const { brief: b } of listTasks()) {
    const f = briefFeatures(b);
    assert.equal(f.length, FEATURE_DIM);
    for (const [i, v] of f.entries()) assert.ok(Number.isFinite(v) && Math.abs(v) <= 3, `${b.id} feature ${i} = ${v}`);
  }
});

test('the action space is read from the brief: discrete counts, continuous is 0', () => {
  assert.equal(discreteActions(brief('cartpole-balance')), 2);
  assert.equal(discreteActions(brief('acrobot-swingup')), 3);
  assert.equal(discreteActions(brief('mountaincar-reach')), 3);
  assert.equal(discreteActions(brief('pendulum-swingup')), 0);
  assert.equal(discreteActions(brief('penguins-species')), 0);
});

test('the concept lexicon names what a task needs, whatever the family calls it', () => {
  assert.equal(concept('acrobot-swingup', 'swing-up'), 1);
  assert.equal(concept('pendulum-swingup', 'swing-up'), 1);
  assert.equal(concept('cartpole-balance', 'swing-up'), 0);
  assert.equal(concept('cartpole-balance', 'balance'), 1);
  assert.equal(concept('pendulum-swingup', 'continuous control'), 1);
  assert.equal(concept('penguins-species', 'classification'), 1);
  assert.equal(concept('cars-mpg', 'lower is better'), 1);
});

test('a task of a family never seen sits nearer the same kind of task than the other kind', () => {
  const acrobot = briefFeatures(brief('acrobot-swingup'));
  const iris = briefFeatures(brief('iris-species'));
  const cartpole = briefFeatures(brief('cartpole-balance'));
  const penguins = briefFeatures(brief('penguins-species'));
  assert.ok(cosine(acrobot, cartpole) > cosine(acrobot, penguins) + 0.2, `acrobot: ${cosine(acrobot, cartpole)} vs ${cosine(acrobot, penguins)}`);
  assert.ok(cosine(iris, penguins) > cosine(iris, cartpole) + 0.2, `iris: ${cosine(iris, penguins)} vs ${cosine(iris, cartpole)}`);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureDoc } from '../../testing/corpus.js';
import { parseDoc } from './doc.js';
import { profile } from './profile.js';
import type { RawColumn } from './read.js';
import { targetCandidates, targetOrder } from './target.js';

test('the documentation: title, description, each variable meaning; the response named in words', () => {
  const doc = fixtureDoc('Prices of houses', 'House sales. The response variable is `price`, modelled on the others.', {
    price: 'sale price in dollars',
    area: 'floor area, square feet',
  });
  const d = parseDoc(doc, ['rownames', 'price', 'area', 'rooms']);
  assert.equal(d.title, 'Prices of houses');
  assert.match(d.description, /House sales/);
  assert.deepEqual(d.variables, { price: 'sale price in dollars', area: 'floor area, square feet' });
  assert.deepEqual(d.responses, ['price']);
});

test('the response named by the examples: the left-hand side of model formulas', () => {
  const doc = fixtureDoc(
    'Affairs',
    'Survey data.',
    { affairs: 'how often', age: 'years' },
    'fm <- lm(affairs ~ age, data = Affairs)\n    glm(I(affairs > 0) ~ age)',
  );
  assert.deepEqual(parseDoc(doc, ['affairs', 'age']).responses, ['affairs']);
  // A column's name used as a plain word in prose is not a mention.
  assert.deepEqual(parseDoc(fixtureDoc('T', 'The outcome depends on Age.', {}), ['age', 'y']).responses, []);
});

const col = (name: string, kind: RawColumn['kind'], cells: RawColumn['cells']): RawColumn => ({ name, kind, cells });

test('the target rule: the named response, else a factor of 2–20 levels, else a numeric column of 10+ values; ids and years never', () => {
  const n = 60;
  const columns = [
    col(
      'id',
      'numeric',
      Array.from({ length: n }, (_, i) => i + 1),
    ),
    col(
      'year',
      'numeric',
      Array.from({ length: n }, (_, i) => 1990 + (i % 30)),
    ),
    col(
      'size',
      'numeric',
      Array.from({ length: n }, (_, i) => (i * 7.3) % 11),
    ),
    col(
      'kind',
      'categorical',
      Array.from({ length: n }, (_, i) => ['a', 'b', 'c'][i % 3]),
    ),
    col(
      'name',
      'text',
      Array.from({ length: n }, (_, i) => `person ${i}`),
    ),
  ];
  const profiles = columns.map(profile);
  const none = { title: '', description: '', variables: {}, responses: [] };
  const plain = targetCandidates(profiles, none);
  assert.deepEqual(
    plain.map((c) => [c.column, c.kind, c.why]),
    [
      ['kind', 'classification', 'factor'],
      ['size', 'regression', 'numeric'],
    ],
  );
  const named = targetCandidates(profiles, { ...none, responses: ['size'] });
  assert.deepEqual(
    named.map((c) => c.column),
    ['size', 'kind'],
  );
  // Tried in order: the first, then the first of the other kind.
  assert.deepEqual(
    targetOrder([...named, { column: 'x', kind: 'regression', why: 'numeric' }]).map((c) => c.column),
    ['size', 'kind', 'x'],
  );
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { listTasks, getPublicTask } from '../tasks/briefs.js';
import { REFERENCE_SPECS } from '../tasks/reference-specs.js';
import { compactExample } from '../outer/agents/prompt.js';
import { KIND_ONLY_FIELDS, MAX_GRAMMAR_STRING, grammarSchema, nodeAt, patchGrammarSchema, schemaKeywords } from './grammar-schema.js';
import { applyMergePatch, mergePatchBetween } from './patch.js';
import { validateSpec } from '../inner/spec-check.js';
import { jobSpecJsonSchema } from './schema.js';

/** Keywords grammar engines reject or ignore unevenly (see docs/llm-agent.md); none is in the grammar form. */
const AVOIDED = [
  '$schema',
  'prefixItems',
  'propertyNames',
  'maxProperties',
  'minProperties',
  'default',
  'pattern',
  '$ref',
  '$defs',
  'oneOf',
  'allOf',
  'not',
  'if',
];

/** A validator compiled from a JSON Schema by zod itself (a second reader of the schema). */
const validator = (schema: Record<string, unknown>) => z.fromJSONSchema(schema);

test('the exact export uses the draft 2020-12 features the grammar form removes', () => {
  const used = schemaKeywords(jobSpecJsonSchema());
  for (const k of ['prefixItems', 'propertyNames', 'maxProperties', 'default']) assert.ok(used.has(k), k);
});

test('the grammar form uses plain features only, with and without a brief', () => {
  for (const schema of [grammarSchema(), ...listTasks().map((t) => grammarSchema(t.brief))]) {
    const used = schemaKeywords(schema);
    for (const k of AVOIDED) assert.ok(!used.has(k), `${k} is in the grammar form`);
    const long = JSON.stringify(schema).match(/"maxLength":(\d+)/g) ?? [];
    for (const m of long) assert.ok(Number(m.split(':')[1]) <= MAX_GRAMMAR_STRING, m);
  }
});

test('every field named in KIND_ONLY_FIELDS exists in the spec schema', () => {
  const root = grammarSchema();
  for (const path of [...KIND_ONLY_FIELDS.control, ...KIND_ONLY_FIELDS.supervised]) assert.ok(nodeAt(root, path), path);
});

test("every task's compact example and reference spec pass its grammar form; the generic form admits its baseline too", () => {
  for (const { brief, baseline } of listTasks()) {
    const narrowed = validator(grammarSchema(brief));
    const generic = validator(grammarSchema());
    // The narrowed form admits the example the compact prompt shows and the reference spec; the
    // generic form admits the baseline as written too (with the other kind's fields at their defaults).
    const specs = [compactExample(baseline, brief), REFERENCE_SPECS[brief.id]?.spec()].filter((s) => s !== undefined);
    for (const spec of specs) {
      const r = narrowed.safeParse(spec);
      assert.ok(r.success, `${brief.id}: ${JSON.stringify(r.error?.issues.slice(0, 2))}`);
    }
    for (const spec of [baseline, ...specs]) assert.ok(generic.safeParse(spec).success, `${brief.id}: generic form`);
  }
});

test('the narrowed form keeps a sampler away from specs the brief rejects', () => {
  const { brief, baseline } = getPublicTask('cartpole-balance');
  const v = validator(grammarSchema(brief));
  const base = baseline as unknown as Record<string, Record<string, unknown>>;
  const bad: [string, unknown][] = [
    ['another task', { ...base, task: 'iris-species' }],
    ['an algorithm the brief does not offer', { ...base, algorithm: { name: 'supervised', optimizer: 'adam', learningRate: 0.01, batchSize: 8, epochs: 1 } }],
    ['a budget over the cap', { ...base, budget: { envSteps: brief.budget.maxEnvSteps + 1 } }],
    ['an unknown parameter', { ...base, environment: { ...base.environment, params: { gravity: 9.8, warp: 1 } } }],
    ['a parameter out of its range', { ...base, environment: { ...base.environment, params: { poleLength: [0.01, 50] } } }],
    ['no reward expression', { ...base, reward: {} }],
    ['a supervised-only field', { ...base, reward: { ...base.reward, objective: 'mse' } }],
  ];
  for (const [why, spec] of bad) assert.equal(v.safeParse(spec).success, false, why);
  const iris = getPublicTask('iris-species');
  const iv = validator(grammarSchema(iris.brief));
  const ib = iris.baseline as unknown as Record<string, Record<string, unknown>>;
  assert.equal(iv.safeParse({ ...ib, dataset: { sources: [{ id: 'hidden-test-set', weight: 1 }] } }).success, false, 'a source outside the catalog');
  assert.equal(iv.safeParse({ ...ib, dataset: { sources: [] } }).success, false, 'no source');
  assert.equal(iv.safeParse({ ...ib, reward: { objective: 'mse' } }).success, false, 'a regression loss on a classification task');
});

test('a [low, high] pair is written with items and a fixed length', () => {
  const pair = nodeAt(grammarSchema(getPublicTask('cartpole-balance').brief), 'environment.params.poleLength') as { anyOf: Record<string, unknown>[] };
  const arr = pair.anyOf.find((a) => a.type === 'array');
  assert.deepEqual([arr?.minItems, arr?.maxItems], [2, 2]);
  assert.equal((arr?.items as { type: string }).type, 'number');
});

test('the patch form: no task field, nothing required, closed objects; every one-field edit of a baseline, as a patch, passes it', () => {
  for (const { brief, baseline } of listTasks()) {
    const schema = patchGrammarSchema(brief, baseline);
    const used = schemaKeywords(schema);
    for (const k of AVOIDED) assert.ok(!used.has(k), `${brief.id}: ${k} is in the patch form`);
    assert.equal(nodeAt(schema, 'task'), undefined);
    assert.equal(schema.required, undefined);
    assert.equal(schema.additionalProperties, false);
    const v = validator(schema);
    assert.ok(v.safeParse({}).success, `${brief.id}: the empty patch`);
    assert.equal(v.safeParse({ task: brief.id }).success, false, `${brief.id}: a patch names no task`);
    assert.equal(v.safeParse({ colour: 'red' }).success, false, `${brief.id}: an unknown field`);
    const base = baseline as unknown as Record<string, Record<string, unknown>>;
    const edits: Record<string, unknown>[] = [
      { ...base, seed: 7 },
      { ...base, model: { ...base.model, hidden: [16] } },
      { ...base, algorithm: { ...base.algorithm, ...('learningRate' in base.algorithm ? { learningRate: 0.002 } : { stepSize: 0.05 }) } },
      brief.kind === 'control'
        ? { ...base, budget: { ...base.budget, envSteps: 1000 } }
        : { ...base, dataset: { ...base.dataset, sources: [{ id: brief.supervised!.sources[0].id, weight: 1 }] } },
    ];
    for (const edited of edits) {
      const patch = mergePatchBetween(baseline, edited);
      const r = v.safeParse(patch);
      assert.ok(r.success, `${brief.id} ${JSON.stringify(patch)}: ${JSON.stringify(r.error?.issues.slice(0, 2))}`);
      assert.equal(validateSpec(applyMergePatch(baseline, patch), brief).ok, true, `${brief.id}: ${JSON.stringify(patch)}`);
    }
  }
  // Another algorithm than the baseline's replaces the section: its fields are required; the baseline's own merge.
  const cart = getPublicTask('cartpole-short');
  const sw = validator(patchGrammarSchema(cart.brief, cart.baseline));
  assert.equal(sw.safeParse({ algorithm: { name: 'dqn' } }).success, false, 'a switch names every field of the new algorithm');
  assert.equal(sw.safeParse({ algorithm: { learningRate: 0.002 } }).success, true, 'the baseline algorithm merges');
  const lr = validator(patchGrammarSchema(getPublicTask('iris-species').brief, getPublicTask('iris-species').baseline));
  assert.equal(lr.safeParse({ algorithm: { learningRate: 5 } }).success, false, 'numeric bounds are kept');
  assert.equal(lr.safeParse({ dataset: { sources: [{ id: 'clean-small' }] } }).success, false, 'array items stay whole');
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { ALGORITHMS, jobSpecJsonSchema } from './schema.js';
import { SpecError, assertSpec, formatIssues, joinPath, parseSpec, showValue, type SpecIssue } from './validate.js';
import { briefIssues, validateSpec } from '../inner/spec-check.js';
import { getPublicTask } from '../tasks/briefs.js';

const { brief, baseline } = getPublicTask('cartpole-balance');
import type { TaskBrief } from './brief.js';

/** A deep copy of the baseline as a plain mutable JSON value. */
function base(): Record<string, any> {
  return structuredClone(baseline) as Record<string, any>;
}

/** Validates against the cartpole brief (or `b`) and returns the issues, failing if the spec is valid. */
function issuesOf(spec: unknown, b: TaskBrief = brief): { issues: SpecIssue[]; message: string } {
  const r = validateSpec(spec, b);
  assert.equal(r.ok, false, 'spec should be rejected');
  if (r.ok) throw new Error('unreachable');
  assert.ok(r.error instanceof SpecError);
  assert.equal(r.error.name, 'SpecError');
  return { issues: r.error.issues, message: r.error.message };
}

/** Asserts exactly one issue at `path` whose rendered message contains every fragment. */
function expectOne(spec: unknown, path: string, fragments: string[], b: TaskBrief = brief): SpecIssue {
  const { issues, message } = issuesOf(spec, b);
  assert.equal(issues.length, 1, `one issue expected, got: ${message}`);
  const [issue] = issues;
  assert.equal(issue.path, path, message);
  for (const f of [path, ...fragments]) assert.ok(message.includes(f), `message should contain ${JSON.stringify(f)}: ${message}`);
  return issue;
}

test('the cartpole-balance baseline is valid against the schema and the brief', () => {
  const r = validateSpec(baseline, brief);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  assert.deepEqual(briefIssues(r.spec, brief), []);
  assert.equal(r.spec.algorithm.name, 'ppo');
});

test('parseSpec fills defaults and does not mutate its input', () => {
  const input = { ...base(), environment: {}, dataset: undefined } as Record<string, any>;
  delete input.dataset;
  const before = structuredClone(input);
  const r = parseSpec(input);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  assert.deepEqual(r.spec.environment, { params: {}, wrappers: [], numEnvs: 8, standardize: true, inputNoise: 0, mixup: 0 });
  assert.deepEqual(r.spec.dataset, {
    demonstrations: null,
    bcEpochs: 20,
    sources: [],
    size: null,
    validationFraction: 0.1,
    columns: { categorical: 'one-hot', maxLevels: 16, missing: 'median', indicator: true },
  });
  assert.deepEqual(input, before);
  const ppo = {
    ...base(),
    algorithm: { name: 'ppo', learningRate: 3e-4, gamma: 0.99, gaeLambda: 0.95, clip: 0.2, epochs: 4, minibatches: 4, rolloutSteps: 128, entropyCoef: 0.01 },
  };
  const p = assertSpec(ppo);
  assert.equal(p.algorithm.name, 'ppo');
  if (p.algorithm.name === 'ppo') {
    assert.equal(p.algorithm.annealLr, true);
    assert.equal(p.algorithm.valueCoef, 0.5);
    assert.equal(p.algorithm.maxGradNorm, 0.5);
    assert.equal(p.algorithm.normalizeAdvantages, true);
  }
  assert.equal(p.budget.targetReturn, null);
});

test('a number out of range names the path, the value and the bound', () => {
  const s = base();
  s.algorithm.learningRate = 5;
  const issue = expectOne(s, 'algorithm.learningRate', ['5', '0.1']);
  assert.equal(issue.value, 5);
  const t = base();
  t.environment.numEnvs = 0;
  expectOne(t, 'environment.numEnvs', ['0', '1']);
  const u = base();
  u.model.hidden = [64, 1000];
  expectOne(u, 'model.hidden[1]', ['1000', '512']);
});

test('a value of the wrong type names the path, the value and the expected type', () => {
  const s = base();
  s.algorithm.learningRate = 'fast';
  expectOne(s, 'algorithm.learningRate', ['"fast"', 'number']);
  const t = base();
  t.budget.envSteps = 1000.5;
  expectOne(t, 'budget.envSteps', ['1000.5', 'int']);
});

test('an unknown field is named with "unknown field", at any level', () => {
  const s = base();
  s.foo = 1;
  const issue = expectOne(s, 'foo', ['unknown field']);
  assert.equal(issue.value, 1);
  const t = base();
  t.algorithm.momentum = 0.9;
  expectOne(t, 'algorithm.momentum', ['0.9', 'unknown field']);
  const u = base();
  u.model.dropoutRate = 0.1;
  expectOne(u, 'model.dropoutRate', ['unknown field']);
});

test('an unknown algorithm name is rejected at algorithm.name, listing the known ones', () => {
  const s = base();
  s.algorithm.name = 'sac';
  expectOne(s, 'algorithm.name', ['"sac"', ...ALGORITHMS]);
});

test('a missing section is reported as missing at its path', () => {
  const s = base();
  delete s.model;
  const issue = expectOne(s, 'model', ['missing']);
  assert.equal(issue.value, undefined);
  const t = base();
  delete t.algorithm.gamma;
  expectOne(t, 'algorithm.gamma', ['missing']);
});

test('every issue is reported, not just the first', () => {
  const s = base();
  s.algorithm.learningRate = 5;
  s.seed = -1;
  s.bar = true;
  const { issues, message } = issuesOf(s);
  assert.deepEqual(issues.map((i) => i.path).sort(), ['algorithm.learningRate', 'bar', 'seed']);
  for (const p of ['algorithm.learningRate', 'bar', 'seed']) assert.ok(message.includes(p), message);
});

test('ars with topDirections > directions is rejected at algorithm.topDirections', () => {
  const s = base();
  s.algorithm = { name: 'ars', stepSize: 0.02, directions: 4, topDirections: 8, noise: 0.03 };
  expectOne(s, 'algorithm.topDirections', ['8', 'directions', '4']);
  s.algorithm.topDirections = 4;
  assert.ok(validateSpec(s, brief).ok);
});

test('a parameter outside the brief range names the parameter, the value and the range', () => {
  const range = (name: string): [number, number] => {
    const p = brief.environment.params.find((q) => q.name === name);
    assert.ok(p, name);
    return [p.min, p.max];
  };
  const [plo, phi] = range('poleLength');
  const s = base();
  s.environment.params = { poleLength: [plo / 2, phi] };
  expectOne(s, 'environment.params.poleLength', [JSON.stringify([plo / 2, phi]), `[${plo}, ${phi}]`]);
  const [, mhi] = range('massCart');
  const t = base();
  t.environment.params = { massCart: mhi + 3 };
  expectOne(t, 'environment.params.massCart', [String(mhi + 3), `${mhi}]`]);
  const u = base();
  u.environment.params = { poleLength: [0.6, 0.4] };
  expectOne(u, 'environment.params.poleLength', ['low <= high']);
  const ok = base();
  ok.environment.params = { poleLength: [plo, phi], massCart: mhi, forceMag: range('forceMag') };
  assert.ok(validateSpec(ok, brief).ok);
});

test('a malformed parameter setting names the rule (a number or a [low, high] pair)', () => {
  for (const bad of [[0.5], [0.3, 0.5, 0.7], 'long']) {
    const s = base();
    s.environment.params = { poleLength: bad };
    const { message } = issuesOf(s);
    assert.ok(message.includes('environment.params.poleLength'), message);
    assert.match(message, /low, high/, message);
  }
});

test('an unknown parameter is rejected, listing the tunable ones', () => {
  const s = base();
  s.environment.params = { gravity: 3 };
  expectOne(s, 'environment.params.gravity', ['3', 'unknown parameter', 'poleLength', 'massPole', 'massCart', 'forceMag']);
});

test('a budget above the brief cap says which cap', () => {
  const s = base();
  s.budget.envSteps = brief.budget.maxEnvSteps + 1;
  expectOne(s, 'budget.envSteps', [String(brief.budget.maxEnvSteps + 1), 'cap', String(brief.budget.maxEnvSteps)]);
  s.budget.envSteps = brief.budget.maxEnvSteps;
  assert.ok(validateSpec(s, brief).ok);
  // above the schema's own maximum: a schema issue with its bound
  s.budget.envSteps = 20_000_000;
  expectOne(s, 'budget.envSteps', ['20000000', '10000000']);
});

test('a budget below one step of the vector of environments is refused at validation, not at run time (issue 42)', () => {
  const s = base();
  s.environment.numEnvs = 8;
  s.budget.envSteps = 7;
  expectOne(s, 'budget.envSteps', ['got 7', 'below environment.numEnvs (8)']);
  s.budget.envSteps = 8;
  assert.ok(validateSpec(s, brief).ok);
  // ARS steps one environment whatever numEnvs says: its budget may be smaller.
  const ars = { ...s, algorithm: { name: 'ars', stepSize: 0.02, directions: 2, topDirections: 1, noise: 0.03 }, budget: { envSteps: 5 } };
  assert.ok(validateSpec(ars, brief).ok);
});

test('an algorithm the brief does not allow is rejected, listing the allowed ones', () => {
  const ppoOnly: TaskBrief = { ...brief, algorithms: ['ppo'] };
  const s = base();
  s.algorithm = { name: 'ars', stepSize: 0.02, directions: 8, topDirections: 4, noise: 0.03 };
  expectOne(s, 'algorithm.name', ['"ars"', 'not allowed', 'ppo'], ppoOnly);
  assert.ok(validateSpec(s, brief).ok);
});

test('a reward expression the compiler rejects names the offending token', () => {
  const s = base();
  s.reward.expression = 'r + eval(x)';
  expectOne(s, 'reward.expression', ['eval', 'unknown function']);
  s.reward.expression = 'r + y';
  expectOne(s, 'reward.expression', ['"y"', 'unknown name']);
  s.reward.expression = 'r + (x';
  expectOne(s, 'reward.expression', ['syntax error']);
  s.reward.expression = 'r + 0.1 * (1 - abs(x) / 2.4) - done * 10 + (t > 100)';
  assert.ok(validateSpec(s, brief).ok);
});

test('demonstrations not in the catalog are rejected, naming the catalog', () => {
  const s = base();
  s.dataset.demonstrations = 'expert';
  expectOne(s, 'dataset.demonstrations', ['"expert"', 'catalog']);
  const withCatalog: TaskBrief = { ...brief, demonstrations: [{ id: 'expert-500', description: 'a PD controller' }] };
  expectOne(s, 'dataset.demonstrations', ['"expert"', 'expert-500'], withCatalog);
  s.dataset.demonstrations = 'expert-500';
  assert.ok(validateSpec(s, withCatalog).ok);
});

test('a task id or wrapper the brief does not offer is rejected', () => {
  const s = base();
  s.task = 'mountaincar';
  expectOne(s, 'task', ['"mountaincar"', 'cartpole-balance']);
  const t = base();
  t.environment.wrappers = ['normalize-observation'];
  assert.ok(validateSpec(t, brief).ok);
  expectOne(t, 'environment.wrappers', ['normalize-observation', 'not offered'], { ...brief, environment: { ...brief.environment, wrappers: [] } });
  t.environment.wrappers = ['clip-reward'];
  expectOne(t, 'environment.wrappers[0]', ['"clip-reward"']);
});

test('non-object inputs are a result, not a crash', () => {
  for (const input of [null, 42, 'spec', [], undefined]) {
    const r = parseSpec(input);
    assert.equal(r.ok, false);
    if (!r.ok) assert.ok(r.error.message.length > 0);
  }
  assert.throws(() => assertSpec({}), SpecError);
});

test('helpers: joinPath, showValue and formatIssues', () => {
  assert.equal(joinPath(['model', 'hidden', 1]), 'model.hidden[1]');
  assert.equal(joinPath([]), '');
  assert.equal(showValue(undefined), 'missing');
  assert.equal(showValue({ a: 1 }), '{"a":1}');
  assert.ok(showValue('x'.repeat(200)).length <= 80);
  assert.equal(formatIssues([{ path: 'a.b', value: 3, message: 'too big' }]), 'a.b: got 3: too big');
  assert.equal(formatIssues([{ path: '', value: undefined, message: 'bad' }]), '(spec): missing: bad');
});

// ------------------------------------------------------------- JSON Schema

type Json = Record<string, unknown>;

/** Walks a JSON Schema; returns the problems (property without description, number without bounds). */
function auditSchema(root: unknown): { problems: string[]; numbers: number; properties: number } {
  const problems: string[] = [];
  let numbers = 0;
  let properties = 0;
  const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
  const visit = (node: unknown, where: string): void => {
    if (!isObj(node)) return;
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (types.includes('number') || types.includes('integer')) {
      numbers++;
      const hasMin = typeof node.minimum === 'number' || typeof node.exclusiveMinimum === 'number';
      const hasMax = typeof node.maximum === 'number' || typeof node.exclusiveMaximum === 'number';
      if (!hasMin) problems.push(`${where}: number without minimum`);
      if (!hasMax) problems.push(`${where}: number without maximum`);
    }
    if (isObj(node.properties)) {
      for (const [k, v] of Object.entries(node.properties)) {
        properties++;
        if (!isObj(v) || typeof v.description !== 'string' || v.description.trim() === '') problems.push(`${where}.${k}: property without description`);
        visit(v, `${where}.${k}`);
      }
    }
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
      const list = node[key];
      if (Array.isArray(list)) list.forEach((v, i) => visit(v, `${where}/${key}[${i}]`));
    }
    for (const key of ['items', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else', 'contains'] as const) {
      if (isObj(node[key])) visit(node[key], `${where}/${key}`);
    }
    for (const key of ['$defs', 'definitions', 'patternProperties'] as const) {
      if (isObj(node[key])) for (const [k, v] of Object.entries(node[key] as Json)) visit(v, `${where}/${key}/${k}`);
    }
  };
  visit(root, '$');
  return { problems, numbers, properties };
}

test('the schema audit itself catches missing descriptions and bounds', () => {
  const bad = {
    type: 'object',
    properties: {
      a: { type: 'number', minimum: 0, description: 'a' },
      b: { type: 'object', properties: { c: { type: 'string' } }, description: 'b' },
      d: { description: 'd', anyOf: [{ type: 'array', items: { type: 'integer', maximum: 3 } }, { type: 'null' }] },
      e: {
        description: 'e',
        type: 'object',
        additionalProperties: { type: 'array', prefixItems: [{ type: 'number', minimum: 0, maximum: 1 }, { type: 'number' }] },
      },
    },
  };
  const { problems } = auditSchema(bad);
  assert.deepEqual(problems.sort(), [
    '$.a: number without maximum',
    '$.b.c: property without description',
    '$.d/anyOf[0]/items: number without minimum',
    '$.e/additionalProperties/prefixItems[1]: number without maximum',
    '$.e/additionalProperties/prefixItems[1]: number without minimum',
  ]);
});

test('jobSpecJsonSchema: every property is described and every number bounded', () => {
  const schema = jobSpecJsonSchema();
  assert.equal(typeof schema, 'object');
  assert.equal(schema.type, 'object');
  assert.equal(typeof schema.description, 'string');
  assert.deepEqual(JSON.parse(JSON.stringify(schema)), schema, 'plain JSON');
  const { problems, numbers, properties } = auditSchema(schema);
  assert.deepEqual(problems, []);
  assert.ok(numbers >= 20, `numbers seen: ${numbers}`);
  assert.ok(properties >= 30, `properties seen: ${properties}`);
  const props = schema.properties as Json;
  for (const k of ['task', 'environment', 'reward', 'dataset', 'model', 'algorithm', 'budget', 'seed']) assert.ok(k in props, k);
  assert.equal(schema.additionalProperties, false);
});

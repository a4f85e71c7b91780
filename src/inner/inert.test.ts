/**
 * The inert-field tables (spec/inert.ts) against the engine: real jobs trained with random values
 * of every field a table lists, the spec as written (inert fields kept, `runJobAsWritten`), give
 * the very weights file of the canonical spec, byte for byte; and every rule of both tables is
 * exercised. A field the engine reads (the learning rate) changes the file: the comparison can fail.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { getPublicTask } from '../tasks/briefs.js';
import { dataForJob } from '../outer/scoring/hidden-score.js';
import { type JsonObject, applyMergePatch } from '../spec/patch.js';
import { inertFields, inertTable } from '../spec/inert.js';
import type { TaskBrief } from '../spec/brief.js';
import { inertContext, validateSpec, validateSpecAsWritten } from './spec-check.js';
import { runJob, runJobAsWritten } from './train.js';
import { arsSpec } from '../testing/specs.js';
import { supervisedSpec } from '../tasks/supervised/define.js';
import { ppoSpec } from '../tasks/control/define.js';

const tmp = mkdtempSync(join(tmpdir(), 'rrl-inert-'));
let n = 0;

/** Random values, within the schema, of every field some table lists. */
const INERT_VALUES: Record<string, fc.Arbitrary<unknown>> = {
  'environment.standardize': fc.boolean(),
  'environment.inputNoise': fc.double({ min: 0, max: 2, noNaN: true }),
  'environment.mixup': fc.double({ min: 0, max: 1, noNaN: true }),
  'environment.numEnvs': fc.integer({ min: 1, max: 64 }),
  'environment.wrappers': fc.constantFrom([], ['normalize-observation']),
  'reward.labelSmoothing': fc.double({ min: 0, max: 0.5, noNaN: true }),
  'reward.focalGamma': fc.double({ min: 0, max: 5, noNaN: true }),
  'reward.huberDelta': fc.double({ min: 0.01, max: 10, noNaN: true }),
  'reward.weight': fc.constantFrom(null, 'x', '1 + abs(r)', 'not an expression ('),
  'dataset.size': fc.oneof(fc.constant(null), fc.integer({ min: 10, max: 100_000 })),
  'dataset.validationFraction': fc.double({ min: 0, max: 0.5, noNaN: true }),
  'dataset.bcEpochs': fc.integer({ min: 1, max: 200 }),
  'model.dropout': fc.double({ min: 0, max: 0.8, noNaN: true }),
  'budget.examples': fc.integer({ min: 1, max: 100_000_000 }),
  'budget.envSteps': fc.integer({ min: 1, max: 10_000_000 }),
  'budget.targetReturn': fc.oneof(fc.constant(null), fc.double({ min: -1e3, max: 1e3, noNaN: true })),
  'budget.stopWhenFlat': fc.boolean(),
  'algorithm.initLogStd': fc.double({ min: -5, max: 2, noNaN: true }),
  'algorithm.momentum': fc.double({ min: 0, max: 0.99, noNaN: true }),
  'algorithm.earlyStoppingPatience': fc.integer({ min: 0, max: 100 }),
};

interface Case {
  name: string;
  brief: TaskBrief;
  spec: JsonObject;
}

const control = (id: string) => getPublicTask(id).brief;
const CASES: Case[] = [
  {
    name: 'PPO on CartPole (discrete actions)',
    brief: control('cartpole-short'),
    spec: ppoSpec('cartpole-short', { numEnvs: 4, rolloutSteps: 16, epochs: 2, minibatches: 2, learningRate: 1e-3, envSteps: 256, hidden: [8] }) as JsonObject,
  },
  { name: 'ARS on CartPole', brief: control('cartpole-short'), spec: arsSpec('cartpole-short', 400, 3) as JsonObject },
  {
    name: 'supervised classification (adam, cross-entropy)',
    brief: control('iris-species'),
    spec: supervisedSpec('iris-species', {
      sources: [{ id: 'noisy-large', weight: 1 }],
      objective: 'cross-entropy',
      hidden: [8],
      epochs: 2,
      examples: 2000,
    }) as JsonObject,
  },
  {
    name: 'supervised regression, linear, no validation split',
    brief: control('cars-mpg'),
    spec: supervisedSpec('cars-mpg', {
      sources: [{ id: 'shifted', weight: 1 }],
      objective: 'mse',
      hidden: [],
      epochs: 2,
      examples: 2000,
      validationFraction: 0,
    }) as JsonObject,
  },
];

/** A patch that sets every field inert for `c` to a random value (the spec's inert paths decide which). */
function inertPatchArb(c: Case): fc.Arbitrary<JsonObject> {
  const checked = validateSpecAsWritten(c.spec, c.brief);
  assert.ok(checked.ok, `${c.name}: ${checked.ok ? '' : checked.error.message}`);
  const paths = inertFields(checked.spec, inertContext(c.brief)).map((r) => r.path);
  const parts = paths.map((p) => {
    const arb = INERT_VALUES[p];
    assert.ok(arb, `no generator for ${p}`);
    return arb.map((v) => [p, v] as const);
  });
  return fc.tuple(...parts).map((pairs) => {
    const patch: JsonObject = {};
    for (const [p, v] of pairs) {
      const [section, field] = p.split('.');
      (patch[section] ??= {}) as JsonObject;
      (patch[section] as JsonObject)[field] = v as never;
    }
    return patch;
  });
}

const weightsOf = (dir: string, brief: TaskBrief): string => readFileSync(join(dir, brief.kind === 'control' ? 'policy.json' : 'model.json'), 'utf8');

async function train(spec: unknown, c: Case, asWritten: boolean): Promise<string> {
  const outDir = join(tmp, `job-${n++}`);
  const options = { outDir, data: dataForJob(c.brief.id, spec) };
  const a = asWritten ? await runJobAsWritten(spec, c.brief, options) : await runJob(spec, c.brief, options);
  return weightsOf(a.dir, c.brief);
}

test('a field the job type ignores never changes the weights file (real jobs, random values)', async () => {
  const exercised = new Set<string>();
  for (const c of CASES) {
    const canonical = validateSpec(c.spec, c.brief);
    assert.ok(canonical.ok);
    const reference = await train(c.spec, c, false);
    await fc.assert(
      fc.asyncProperty(inertPatchArb(c), async (patch) => {
        const spec = applyMergePatch(c.spec, patch);
        const written = validateSpecAsWritten(spec, c.brief);
        assert.ok(written.ok, written.ok ? '' : written.error.message);
        for (const r of inertFields(written.spec, inertContext(c.brief))) exercised.add(`${c.brief.kind}:${r.path}`);
        const checked = validateSpec(spec, c.brief);
        assert.ok(checked.ok);
        assert.deepEqual(checked.spec, canonical.spec, `${c.name}: the canonical spec of ${JSON.stringify(patch)}`);
        assert.equal(await train(spec, c, true), reference, `${c.name}: trained as written with ${JSON.stringify(patch)}`);
      }),
      { seed: 42, numRuns: 6 },
    );
  }
  const all = ['supervised', 'control'].flatMap((kind) =>
    ['ppo', 'ars'].flatMap((alg) => inertTable({ kind: kind as 'control', discreteActions: true }, alg).map((r) => `${kind}:${r.path}`)),
  );
  const missing = [...new Set(all)].filter((p) => !exercised.has(p));
  assert.deepEqual(missing, [], 'every rule of the tables is trained with random values');
});

test('a field the engine reads changes the weights file (the comparison can fail)', async () => {
  for (const c of [CASES[0], CASES[2]]) {
    const a = await train(c.spec, c, true);
    const b = await train(applyMergePatch(c.spec, { algorithm: { learningRate: 0.01 } }), c, true);
    assert.notEqual(a, b, c.name);
  }
});

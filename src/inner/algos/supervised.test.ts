import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '../train.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { REFERENCE_SPECS } from '../../tasks/reference-specs.js';
import { dataForJob, scoreArtifact } from '../../outer/scoring/hidden-score.js';
import type { JobSpecInput } from '../../spec/schema.js';

const tmp = mkdtempSync(join(tmpdir(), 'rrl-sup-'));

async function run(task: string, spec: JobSpecInput, name: string) {
  const { brief } = getPublicTask(task);
  const dir = join(tmp, name);
  const a = await runJob(spec, brief, { outDir: dir, data: dataForJob(task, spec) });
  return { a, score: scoreArtifact(task, dir), dir };
}

test('supervised training learns two-moons from a fixed seed, far above the trivial predictor', async () => {
  const { a, score } = await run('two-moons', REFERENCE_SPECS['two-moons'].spec(), 'moons');
  assert.ok(score.normalized > 0.7, `normalised accuracy ${score.normalized}`);
  assert.ok(a.cost.examples > 0 && a.cost.envSteps === 0);
});

test('supervised regression (cars) beats predicting the mean', async () => {
  const { score } = await run('cars-mpg', REFERENCE_SPECS['cars-mpg'].spec(), 'cars');
  assert.ok(score.normalized > 0.3, `normalised RMSE score ${score.normalized}`);
});

test('same spec and seed give the same model; the example budget is respected', async () => {
  const spec = { ...REFERENCE_SPECS['iris-species'].spec(), budget: { examples: 2000 } };
  const a = await run('iris-species', spec, 'det-a');
  const b = await run('iris-species', spec, 'det-b');
  assert.equal(readFileSync(join(a.dir, 'model.json'), 'utf8'), readFileSync(join(b.dir, 'model.json'), 'utf8'));
  assert.ok(a.a.cost.examples <= 2000);
  assert.equal(a.a.stopReason, 'budget');
});

test('every objective, augmentation and optimiser option trains without NaN', async () => {
  const base = getPublicTask('penguins-species').baseline;
  const variants: [string, Partial<Record<keyof JobSpecInput, unknown>>][] = [
    ['focal', { reward: { objective: 'focal', focalGamma: 2, labelSmoothing: 0.1, weight: 'label == 1 ? 3 : 1' } }],
    ['mixup', { environment: { ...base.environment, mixup: 0.4, inputNoise: 0.1 } }],
    [
      'dropout-sgd',
      {
        model: { hidden: [32], activation: 'tanh', dropout: 0.3 },
        algorithm: {
          name: 'supervised',
          optimizer: 'sgd',
          learningRate: 0.05,
          momentum: 0.9,
          weightDecay: 0.001,
          schedule: 'step',
          warmupEpochs: 2,
          batchSize: 16,
          epochs: 10,
        },
      },
    ],
    [
      'adamw-cosine',
      {
        algorithm: {
          name: 'supervised',
          optimizer: 'adamw',
          learningRate: 0.01,
          weightDecay: 0.01,
          schedule: 'cosine',
          batchSize: 32,
          epochs: 10,
          earlyStoppingPatience: 3,
        },
      },
    ],
  ];
  for (const [name, patch] of variants) {
    const { score } = await run('penguins-species', { ...base, ...patch } as JobSpecInput, name);
    assert.ok(Number.isFinite(score.raw) && score.raw > 0.4, `${name}: accuracy ${score.raw}`);
  }
  const huber = { ...getPublicTask('cars-mpg').baseline, reward: { objective: 'huber', huberDelta: 1 } } as JobSpecInput;
  const { score } = await run('cars-mpg', huber, 'huber');
  assert.ok(Number.isFinite(score.raw));
});

test('a weight expression that goes negative fails the job with the expression named', async () => {
  const { brief, baseline } = getPublicTask('penguins-species');
  const spec = { ...baseline, reward: { objective: 'cross-entropy', weight: 'beak_length - 45' } } as JobSpecInput;
  const data = dataForJob('penguins-species', spec);
  await assert.rejects(runJob(spec, brief, { outDir: join(tmp, 'neg'), data }), /reward\.weight "beak_length - 45" gave -/);
});

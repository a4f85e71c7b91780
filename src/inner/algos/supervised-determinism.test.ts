/**
 * The supervised trainer's results are pinned bit for bit: each spec below trains on synthetic
 * data made here, and a SHA-256 of what the job returns (every weight and bias as float32 bits,
 * the example and epoch counts, the stop reason, the final validation numbers and every logged
 * value as float64 bits) must equal the checksum recorded for it.
 *
 * The checksums were computed from the pre-change trainer, at commit 880d849 (before the
 * training loop was sped up for issue 44: packed rows, reused buffers): a speed change must not
 * change a single bit, nor the generator's draw order (mixture, split, shuffles, noise, mixup,
 * dropout). A deliberate change of results must record new checksums and say why.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { trainSupervised } from './supervised.js';
import { JobSpecSchema, type JobSpecInput } from '../../spec/schema.js';
import type { SupervisedData } from '../../spec/data.js';
import type { TaskBrief } from '../../spec/brief.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { Rng } from '../../util/rng.js';

/** Rows of a synthetic table: `d` features, classes from a fixed linear rule with noise, or a regression target. */
function table(n: number, d: number, classes: number, seed: number): { x: number[][]; y: number[] } {
  const rng = new Rng(seed);
  const x: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const row = Array.from({ length: d }, (_, j) => rng.normal() * (j + 1) + j);
    const s = row.reduce((a, v, j) => a + (j % 2 ? -v : v) / (j + 1), 0) + 0.3 * rng.normal();
    x.push(row);
    y.push(classes ? Math.min(classes - 1, Math.max(0, Math.floor(s / 2 + classes / 2))) : s * 3 + 10);
  }
  return { x, y };
}

/** A brief for the synthetic table (a real brief's fields with this table's features and target). */
function brief(d: number, classes: number): TaskBrief {
  const base = getPublicTask('penguins-species').brief;
  return {
    ...base,
    id: 'synthetic-determinism',
    supervised: {
      features: Array.from({ length: d }, (_, j) => ({ name: `f${j}`, description: '' })),
      target:
        classes > 0
          ? { name: 'label', description: '', type: 'classification', classes: Array.from({ length: classes }, (_, c) => `c${c}`) }
          : { name: 'value', description: '', type: 'regression' },
      sources: [
        { id: 'a', description: '', examples: 500 },
        { id: 'b', description: '', examples: 300 },
      ],
    },
  };
}

/** A spec over the synthetic table with the given sections replaced. */
function spec(classes: number, patch: Partial<Record<keyof JobSpecInput, unknown>>): JobSpecInput {
  return {
    task: 'synthetic-determinism',
    environment: { standardize: true },
    reward: { objective: classes ? 'cross-entropy' : 'mse' },
    dataset: { sources: [{ id: 'a', weight: 1 }], validationFraction: 0.2 },
    model: { hidden: [16, 12], activation: 'tanh' },
    algorithm: { name: 'supervised', optimizer: 'adam', learningRate: 0.01, batchSize: 32, epochs: 6 },
    budget: { examples: 100_000 },
    seed: 7,
    ...patch,
  } as JobSpecInput;
}

const CASES: { name: string; d: number; classes: number; input: JobSpecInput; checksum: string }[] = [
  {
    name: 'classification: label smoothing, weights, early stopping',
    d: 5,
    classes: 3,
    input: spec(3, {
      reward: { objective: 'cross-entropy', labelSmoothing: 0.1, weight: 'label == 2 ? 2 : f0 > 1 ? 0.5 : 1' },
      algorithm: { name: 'supervised', optimizer: 'adam', learningRate: 0.02, batchSize: 24, epochs: 12, earlyStoppingPatience: 2 },
    }),
    checksum: '0451c5d4f4cc62703ccd121cfcedd5e058c27f903ddd893701307e80a78c6c90',
  },
  {
    name: 'classification: noise, mixup, dropout, SGD with L2, step schedule with warm-up',
    d: 5,
    classes: 3,
    input: spec(3, {
      environment: { standardize: true, inputNoise: 0.2, mixup: 0.4 },
      model: { hidden: [16, 12], activation: 'relu', dropout: 0.3 },
      algorithm: {
        name: 'supervised',
        optimizer: 'sgd',
        learningRate: 0.05,
        momentum: 0.9,
        weightDecay: 0.001,
        schedule: 'step',
        warmupEpochs: 2,
        batchSize: 16,
        epochs: 8,
      },
    }),
    checksum: '4ddbf66e9decd4f9442de29a6359fc1e23dd95b9a23850a902b40c5eacef5d4f',
  },
  {
    name: 'focal loss, a mixture of two sources drawn with replacement, no validation, budget stop',
    d: 4,
    classes: 2,
    input: spec(2, {
      reward: { objective: 'focal', focalGamma: 2 },
      dataset: {
        sources: [
          { id: 'a', weight: 0.7 },
          { id: 'b', weight: 0.3 },
        ],
        size: 900,
        validationFraction: 0,
      },
      algorithm: { name: 'supervised', optimizer: 'adam', learningRate: 0.01, weightDecay: 0.01, batchSize: 64, epochs: 20 },
      budget: { examples: 3000 },
    }),
    checksum: '7008f24adde5d9cac4c7c7e48078d4f2c05a5e247b2c41bbd21f178395a60956',
  },
  {
    name: 'regression: MSE, AdamW, cosine, unstandardised inputs, dropout',
    d: 4,
    classes: 0,
    input: spec(0, {
      environment: { standardize: false },
      model: { hidden: [16], activation: 'relu', dropout: 0.2 },
      algorithm: { name: 'supervised', optimizer: 'adamw', learningRate: 0.01, weightDecay: 0.01, schedule: 'cosine', batchSize: 32, epochs: 6 },
    }),
    checksum: 'a55981bc828af0432d5e6b57b887993091c75a7f58833a064718dd1b2d137386',
  },
  {
    name: 'regression: Huber, Adam with L2, mixup and noise, one batch over every row',
    d: 3,
    classes: 0,
    input: spec(0, {
      environment: { standardize: true, inputNoise: 0.05, mixup: 0.2 },
      reward: { objective: 'huber', huberDelta: 0.5, weight: 'label > 10 ? 2 : 1' },
      algorithm: { name: 'supervised', optimizer: 'adam', learningRate: 0.005, weightDecay: 0.001, batchSize: 4096, epochs: 5 },
    }),
    checksum: 'af427da3354f85b6f22ffb4609d359ff4b923a4cb8bb54ae87256536455c502d',
  },
];

/** The checksum of one job's outcome. */
async function outcome(c: (typeof CASES)[number]): Promise<string> {
  const parsed = JobSpecSchema.parse(c.input);
  const data: SupervisedData = { sources: { a: table(500, c.d, c.classes, 11), b: table(300, c.d, c.classes, 12) } };
  const h = createHash('sha256');
  const f64 = (v: number): void => {
    h.update(new Uint8Array(new Float64Array([v]).buffer));
  };
  const r = await trainSupervised(
    {
      spec: parsed,
      brief: brief(c.d, c.classes),
      data,
      maxExamples: parsed.budget.examples ?? 0,
      log: (name, step, value) => {
        h.update(name);
        f64(step);
        f64(value);
      },
      progress: (n) => f64(n),
      checkLimits: () => {},
    },
    parsed.algorithm as Extract<typeof parsed.algorithm, { name: 'supervised' }>,
  );
  for (const l of r.model.layers) {
    h.update(new Uint8Array(Float32Array.from(l.weights).buffer));
    h.update(new Uint8Array(Float32Array.from(l.bias).buffer));
  }
  h.update(`${r.examples} ${r.epochs} ${r.stopReason} ${JSON.stringify(r.model.inputNorm)} ${JSON.stringify(r.model.targetNorm)}`);
  if (r.validation) [r.validation.loss, r.validation.metric].forEach(f64);
  if (process.env.RRL_PRINT_CHECKSUMS) console.log(c.name, r.stopReason, r.epochs, r.examples, r.validation);
  return h.digest('hex');
}

test('supervised training gives bit-identical results to the pre-change trainer (checksums from commit 880d849)', async () => {
  const got: string[] = [];
  for (const c of CASES) got.push(await outcome(c));
  if (process.env.RRL_PRINT_CHECKSUMS) console.log(JSON.stringify(got, null, 2));
  CASES.forEach((c, i) => {
    assert.equal(got[i], c.checksum, c.name);
  });
});

/**
 * The exported graph against the engine, as properties over random models: random tables (numeric
 * columns with empty cells, categorical columns with rare and unseen levels), every column
 * decision, random networks; ONNX Runtime's outputs equal `ModelRunner`'s and `PolicyRunner`'s.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ColumnInfo } from '../../spec/data.js';
import { DEFAULT_COLUMN_DECISIONS, type RawColumn, fitColumns, rawColumns } from '../data/columns.js';
import { MODEL_FORMAT, type ModelFile, ModelRunner } from '../model.js';
import { type DenseLayer, POLICY_FORMAT, type PolicyFile, PolicyRunner } from '../policy.js';
import { Rng } from '../../util/rng.js';
import { modelGraph, policyGraph } from './model-graph.js';
import { inputsFromCoded } from './inputs.js';
import { OnnxSession } from './session.js';

function layers(rng: Rng, widths: number[]): DenseLayer[] {
  return widths.slice(1).map((out, i) => {
    const n = widths[i];
    return { in: n, out, weights: Array.from({ length: n * out }, () => rng.normal()), bias: Array.from({ length: out }, () => rng.normal()) };
  });
}

/** A random table (coded rows) with its codings: numeric columns with gaps, categorical ones with levels the training rows lack. */
function table(rng: Rng, rows: number, cols: number): { x: (number | null)[][]; codings: ColumnInfo[]; names: string[] } {
  const codings: ColumnInfo[] = Array.from({ length: cols }, (_, j) =>
    j % 2 === 0 ? { kind: 'numeric' } : { kind: 'categorical', levels: Array.from({ length: 2 + rng.int(8) }, (_, k) => `L${j}_${k}`) },
  );
  const x = Array.from({ length: rows }, () =>
    codings.map((c) => {
      if (rng.uniform(0, 1) < 0.15) return NaN;
      return c.kind === 'numeric' ? rng.normal() * 10 + 3 : rng.int(Math.max(1, c.levels.length - 1));
    }),
  );
  return { x, codings, names: codings.map((_, j) => `c${j}`) };
}

test('a model over columns: ONNX equals the engine on random tables and every column decision', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        seed: fc.integer({ min: 1, max: 1e9 }),
        cols: fc.integer({ min: 1, max: 5 }),
        categorical: fc.constantFrom('one-hot', 'frequency', 'target'),
        missing: fc.constantFrom('mean', 'median', 'constant', 'drop-row'),
        indicator: fc.boolean(),
        maxLevels: fc.integer({ min: 2, max: 6 }),
        kind: fc.constantFrom('classification', 'regression'),
        activation: fc.constantFrom('tanh', 'relu'),
      }),
      async (p) => {
        const rng = new Rng(p.seed);
        const { x, codings, names } = table(rng, 60, p.cols);
        const classes = ['a', 'b', 'c'];
        const y = x.map(() => (p.kind === 'classification' ? rng.int(3) : rng.normal()));
        const decisions = { ...DEFAULT_COLUMN_DECISIONS, categorical: p.categorical, missing: p.missing, indicator: p.indicator, maxLevels: p.maxLevels };
        const target = p.kind === 'classification' ? { kind: 'classification' as const, y, classes: 3 } : { kind: 'regression' as const, y };
        const fit = fitColumns(rawColumns(x, names, codings) as RawColumn[], target, decisions, p.seed);
        const d = fit.state.features.length;
        const out = p.kind === 'classification' ? 3 : 1;
        const file: ModelFile = {
          format: MODEL_FORMAT,
          features: fit.state.features,
          columns: { names, codings, fitted: fit.state },
          kind: p.kind,
          ...(p.kind === 'classification' ? { classes } : {}),
          activation: p.activation,
          layers: layers(rng, [d, 4, out]),
          inputNorm: { mean: Array.from({ length: d }, () => rng.normal()), std: Array.from({ length: d }, () => 0.5 + rng.uniform(0, 1)) },
          targetNorm: p.kind === 'regression' ? { mean: 5, std: 2 } : null,
        };
        await assertModelEqual(file, x);
      },
    ),
    { numRuns: 25 },
  );
});

test('a model over complete numeric rows: ONNX equals the engine', async () => {
  const rng = new Rng(7);
  const file: ModelFile = {
    format: MODEL_FORMAT,
    features: ['u', 'v', 'w'],
    kind: 'classification',
    classes: ['x', 'y'],
    activation: 'relu',
    layers: layers(rng, [3, 5, 5, 2]),
    inputNorm: { mean: [1, 2, 3], std: [2, 2, 0.5] },
    targetNorm: null,
  };
  await assertModelEqual(
    file,
    Array.from({ length: 40 }, () => [rng.normal(), rng.normal(), rng.normal()]),
  );
});

test('an unseen level reads as a level the training rows lacked; an empty cell as the engine reads it', async () => {
  const names = ['colour'];
  const codings: ColumnInfo[] = [{ kind: 'categorical', levels: ['red', 'green', 'blue', 'never'] }];
  const x = Array.from({ length: 30 }, (_, i) => [i % 3]);
  const fit = fitColumns(rawColumns(x, names, codings), { kind: 'regression', y: x.map((r) => r[0]) }, { ...DEFAULT_COLUMN_DECISIONS, indicator: true }, 1);
  const rng = new Rng(3);
  const file: ModelFile = {
    format: MODEL_FORMAT,
    features: fit.state.features,
    columns: { names, codings, fitted: fit.state },
    kind: 'regression',
    activation: 'tanh',
    layers: layers(rng, [fit.state.features.length, 3, 1]),
    inputNorm: null,
    targetNorm: null,
  };
  const engine = new ModelRunner(file).predict([[3], [NaN]]);
  const session = await OnnxSession.load(modelGraph(file, 'test').bytes);
  const out = await session.run({ colour: { type: 'string', values: ['purple', ''] } }, 2);
  await session.close();
  assertClose(
    out.prediction.values as number[],
    engine,
    'an unseen text is what a table level the fit never saw gives; an empty cell what a missing one gives',
  );
});

test('a policy: ONNX greedy actions equal the engine for discrete and box spaces, with and without normalisation', async () => {
  const rng = new Rng(11);
  const obs = Float64Array.from({ length: 50 * 4 }, () => rng.normal() * 30);
  const spaces: PolicyFile['actionSpace'][] = [
    { type: 'discrete', n: 3 },
    { type: 'box', low: [-1, -2], high: [1, 0.5] },
  ];
  for (const actionSpace of spaces) {
    for (const obsNorm of [null, { mean: [1, 0, -1, 2], std: [2, 1, 3, 0.5], clip: 10 }]) {
      const out = actionSpace.type === 'discrete' ? actionSpace.n : actionSpace.low.length;
      const file: PolicyFile = { format: POLICY_FORMAT, obsDim: 4, actionSpace, activation: 'tanh', layers: layers(rng, [4, 8, out]), obsNorm };
      const engine = new PolicyRunner(file).act(obs, 50);
      const session = await OnnxSession.load(policyGraph(file, 'test').bytes);
      const got = await session.run({ observation: { type: 'double', values: obs, width: 4 } }, 50);
      await session.close();
      assertClose(got.action.values as number[], Array.from(engine), `${actionSpace.type}, ${obsNorm ? 'normalised' : 'raw'}`);
    }
  }
});

/** Runs `file` on `x` through ONNX Runtime and the engine; asserts the same labels and values within 1e-9. */
async function assertModelEqual(file: ModelFile, x: (number | null)[][]): Promise<void> {
  const runner = new ModelRunner(file);
  const coded = x.map((r) => r.map((v) => (v === null ? NaN : v)));
  const session = await OnnxSession.load(modelGraph(file, 'test').bytes);
  const out = await session.run(inputsFromCoded(file, x), x.length);
  await session.close();
  if (file.kind === 'classification') {
    assert.deepEqual(
      out.label.values,
      runner.predict(coded).map((i) => file.classes![i]),
    );
    assertClose(out.probabilities.values as number[], runner.predictProba(coded).flat(), 'probabilities');
  } else assertClose(out.prediction.values as number[], runner.predict(coded), 'predictions');
}

/** Equal within 1e-9, relative to the value's size (at least 1): the graph sums in another order than the engine. */
function assertClose(got: number[], want: number[], what: string): void {
  assert.equal(got.length, want.length, `${what}: ${got.length} values, expected ${want.length}`);
  got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-9 * Math.max(1, Math.abs(want[i])), `${what}, value ${i}: ${v} vs ${want[i]}`));
}

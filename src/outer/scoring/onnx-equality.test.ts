/**
 * The exported ONNX model equals the engine on the hidden evaluation: on every built-in supervised
 * task (the command-scored iris-command excepted: its model is its own program's), on task files
 * with categorical columns and empty cells (a classifier and a regressor), and on every built-in
 * control task (the greedy actions on the hidden episodes' observations). Each model is the task's
 * baseline spec trained here (control ones on a short budget: equality needs a trained network,
 * not a good one).
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '../../inner/train.js';
import type { ModelFile } from '../../inner/model.js';
import type { PolicyFile } from '../../inner/policy.js';
import { modelGraph, policyGraph } from '../../inner/onnx/model-graph.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { CONTROL_TASKS } from '../../tasks/control/tasks.js';
import { SUPERVISED_EVALUATIONS } from '../../tasks/supervised/evaluate.js';
import { registerTaskDir } from '../../tasks/file/register.js';
import { toCsv, writeTask } from '../../testing/task-files.js';
import { dataForJob } from './hidden-score.js';
import { controlEquality, supervisedEquality } from './onnx-equality.js';

const work = mkdtempSync(join(tmpdir(), 'rrl-onnx-eq-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

/** Trains `spec` of `taskId` into a fresh directory and returns its trained file. */
async function trained<T>(taskId: string, spec: unknown, file: string): Promise<T> {
  const { brief } = getPublicTask(taskId);
  const outDir = join(work, `${taskId}-${file}`);
  await runJob(spec, brief, { outDir, data: dataForJob(taskId, spec) });
  return JSON.parse(readFileSync(join(outDir, file), 'utf8')) as T;
}

async function assertSupervisedEqual(taskId: string): Promise<void> {
  const model = await trained<ModelFile>(taskId, getPublicTask(taskId).baseline, 'model.json');
  const eq = await supervisedEquality(taskId, model, modelGraph(model, 'test').bytes);
  assert.ok(eq.rows > 0, `${taskId}: hidden rows`);
  assert.equal(eq.labelsDiffering, 0, `${taskId}: labels`);
  assert.ok(eq.maxProbabilityDiff <= 1e-5, `${taskId}: probabilities differ by ${eq.maxProbabilityDiff}`);
  assert.ok(eq.maxValueDiff <= 1e-5, `${taskId}: values differ by ${eq.maxValueDiff} (relative)`);
}

for (const taskId of Object.keys(SUPERVISED_EVALUATIONS).filter((id) => !SUPERVISED_EVALUATIONS[id].evaluation)) {
  test(`ONNX equals the engine on the hidden rows of ${taskId}`, () => assertSupervisedEqual(taskId));
}

/** Rows of a small register with a categorical site, a yes/no column, empty cells in both kinds, a class and a value. */
function registerRows(n: number): Record<string, string | number>[] {
  return Array.from({ length: n }, (_, i) => {
    const site = ['north', 'south', 'east', 'west', 'harbour'][(i * 7) % 5];
    const age = 30 + ((i * 13) % 50);
    const smoker = i % 11 === 0 ? '' : Math.sin(i) > 0.3 ? 'yes' : 'no';
    const dose = i % 9 === 0 ? 'NA' : Number((1 + ((i * 31) % 17) / 4).toFixed(2));
    const value = age / 10 + (site === 'harbour' ? 2 : 0) + (smoker === 'yes' ? 1.5 : 0) + (typeof dose === 'number' ? dose / 2 : 0);
    return { age: i % 23 === 0 ? '' : age, site: i % 17 === 0 ? '' : site, smoker, dose, outcome: value > 7 ? 'high' : 'low', value: Number(value.toFixed(3)) };
  });
}

test('ONNX equals the engine on task files with categorical columns and empty cells (classification and regression)', async () => {
  const dir = mkdtempSync(join(work, 'tasks-'));
  writeFileSync(join(dir, 'register.csv'), toCsv(registerRows(400)));
  const common = {
    kind: 'supervised',
    description: 'Patients of a register: age, site, smoking and a dose, some cells empty.',
    caps: { maxExamples: 20_000, maxWallSeconds: 60 },
    baseline: { epochs: 10, examples: 4000, hidden: [8], learningRate: 0.01 },
  };
  const features = ['age', 'site', 'smoker', 'dose'];
  writeTask(dir, 'cls.json', {
    ...common,
    id: 'onnx-register-outcome',
    title: 'High or low outcome from a register',
    data: { file: 'register.csv', target: 'outcome', type: 'classification', features, missing: 'keep' },
    metric: 'accuracy',
  });
  writeTask(dir, 'reg.json', {
    ...common,
    id: 'onnx-register-value',
    title: 'An outcome value from a register',
    data: { file: 'register.csv', target: 'value', type: 'regression', features, missing: 'keep' },
    metric: 'rmse',
  });
  await registerTaskDir(dir);
  for (const taskId of ['onnx-register-outcome', 'onnx-register-value']) {
    for (const categorical of ['one-hot', 'frequency', 'target'] as const) {
      const base = getPublicTask(taskId).baseline as { dataset?: Record<string, unknown> };
      const spec = { ...base, dataset: { ...base.dataset, columns: { categorical, missing: 'median', indicator: true, maxLevels: 3 } } };
      const model = await trained<ModelFile>(taskId, spec, 'model.json');
      assert.ok(model.columns, `${taskId}: the model reads the table's columns`);
      const eq = await supervisedEquality(taskId, model, modelGraph(model, 'test').bytes);
      assert.equal(eq.labelsDiffering, 0, `${taskId}, ${categorical}: labels`);
      assert.ok(eq.maxProbabilityDiff <= 1e-5 && eq.maxValueDiff <= 1e-5, `${taskId}, ${categorical}: ${JSON.stringify(eq)}`);
    }
  }
});

for (const def of CONTROL_TASKS) {
  test(`ONNX greedy actions equal the engine's on the hidden episodes of ${def.id}`, async () => {
    const base = getPublicTask(def.id).baseline as { budget: Record<string, unknown> };
    const policy = await trained<PolicyFile>(def.id, { ...base, budget: { ...base.budget, envSteps: 4096 } }, 'policy.json');
    const eq = await controlEquality(def.id, policy, policyGraph(policy, 'test').bytes);
    assert.ok(eq.observations >= def.evaluationEpisodes, `${def.id}: observations of the hidden episodes`);
    assert.equal(eq.actionsDiffering, 0, `${def.id}: ${eq.actionsDiffering} of ${eq.observations} actions differ`);
  });
}

import test from 'node:test';
import assert from 'node:assert/strict';
import { listTasks } from './briefs.js';
import { getHiddenEvaluation } from './hidden.js';
import { REFERENCE_SPECS } from './reference-specs.js';
import { validateSpec } from '../inner/spec-check.js';
import { skipWithoutPython } from '../testing/python.js';
import { CONTROL_EVALUATIONS } from './control/evaluate.js';
import { GYMNASIUM_EVALUATIONS } from './gymnasium/evaluate.js';

const tasks = listTasks();

test('the suite: at least 12 tasks in 6 families, 5 control, 3 supervised on real data, a quarter held out', () => {
  assert.ok(tasks.length >= 12, `${tasks.length} tasks`);
  assert.ok(new Set(tasks.map((t) => t.brief.family)).size >= 6);
  assert.ok(tasks.filter((t) => t.brief.kind === 'control').length >= 5);
  assert.ok(tasks.filter((t) => t.brief.kind === 'supervised' && t.brief.data === 'real').length >= 3);
  assert.ok(tasks.filter((t) => t.brief.split === 'held-out').length * 4 >= tasks.length);
  assert.equal(new Set(tasks.map((t) => t.brief.id)).size, tasks.length, 'ids are unique');
});

test('held-out tasks differ in content from the train tasks of their family', () => {
  for (const held of tasks.filter((t) => t.brief.split === 'held-out')) {
    for (const tr of tasks.filter((t) => t.brief.split === 'train' && t.brief.family === held.brief.family)) {
      const differs =
        held.brief.description !== tr.brief.description &&
        (held.brief.budget.maxEnvSteps !== tr.brief.budget.maxEnvSteps ||
          held.brief.environment.id !== tr.brief.environment.id ||
          held.brief.supervised?.target.name !== tr.brief.supervised?.target.name ||
          held.brief.title !== tr.brief.title);
      assert.ok(differs, `${held.brief.id} vs ${tr.brief.id}`);
    }
  }
});

test('every baseline and every reference spec is valid for its task', () => {
  for (const { brief, baseline } of tasks) {
    const r = validateSpec(baseline, brief);
    assert.ok(r.ok, `${brief.id} baseline: ${r.ok ? '' : r.error.message}`);
    const ref = REFERENCE_SPECS[brief.id];
    assert.ok(ref, `${brief.id} has a reference spec`);
    const s = validateSpec(ref.spec(), brief);
    assert.ok(s.ok, `${brief.id} reference: ${s.ok ? '' : s.error.message}`);
  }
});

/** Checks that a task's anchors are finite, ordered and explained. */
function checkAnchors(id: string): void {
  const a = getHiddenEvaluation(id).anchors();
  assert.ok(Number.isFinite(a.random) && Number.isFinite(a.reference));
  assert.ok(a.reference > a.random, `${id}: reference ${a.reference} > random ${a.random}`);
  assert.ok(a.how.length > 20);
}

// A Gymnasium task's random anchor is measured through the Python bridge.
const isGymnasium = (t: (typeof tasks)[number]): boolean => t.brief.environment?.gymnasium !== undefined;

test('every task has a hidden evaluation whose anchors are ordered and explained', () => {
  for (const { brief } of tasks.filter((t) => !isGymnasium(t))) checkAnchors(brief.id);
});

test('every Gymnasium task has a hidden evaluation whose anchors are ordered and explained', {
  skip: skipWithoutPython('the anchors of the Gymnasium tasks', ['gymnasium', 'mujoco']),
}, () => {
  const gym = tasks.filter(isGymnasium);
  assert.ok(gym.length >= 2, 'gym-cartpole and inverted-pendulum-torch');
  for (const { brief } of gym) checkAnchors(brief.id);
});

test('briefs describe the metric in words and never carry held-out numbers', () => {
  for (const { brief } of tasks) {
    assert.ok(brief.metric.length > 30);
    const text = JSON.stringify(brief);
    assert.doesNotMatch(text, /heldOut|hidden seed|testFraction/i);
  }
});

test('every built-in control task states in its metric the reference its evaluation normalises by', () => {
  const references = { ...CONTROL_EVALUATIONS, ...GYMNASIUM_EVALUATIONS };
  const control = tasks.filter((t) => t.brief.kind === 'control' && !t.brief.id.includes('-fam-'));
  assert.ok(control.length >= 8, `${control.length} built-in control tasks`);
  for (const { brief } of control) {
    const settings = references[brief.id];
    assert.ok(settings, `${brief.id} has evaluation settings`);
    assert.match(brief.metric.replace(/−/g, '-'), new RegExp(`[^0-9.-]${settings.reference}[^0-9.]`), `${brief.id}: the metric states ${settings.reference}`);
  }
});

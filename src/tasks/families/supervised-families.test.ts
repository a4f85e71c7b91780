import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAMILIES, generateFamilyTasks, registerFamilyTasks } from './index.js';
import { getPublicTask } from '../briefs.js';
import { getHiddenEvaluation, getSupervisedEvaluation } from '../hidden.js';
import { validateSpec } from '../../inner/spec-check.js';
import { runJob } from '../../inner/train.js';
import { dataForJob, scoreArtifact, type Score } from '../../outer/scoring/hidden-score.js';
import { Scorer } from '../../outer/scoring/scorer-pool.js';
import type { ExtraTask } from '../extra.js';
import type { SupervisedTaskDef } from '../supervised/define.js';
import { COUNTS_CONFIG } from './counts/define.js';
import { TABULAR_CONFIG } from './tabular/define.js';
import { VEGA_MORE_CONFIG } from './vega-more/define.js';

// The held-out rows depend on the secret: these tests use their own.
process.env.RRL_EVAL_SECRET = 'supervised-families-test-secret';

const tmp = mkdtempSync(join(tmpdir(), 'rrl-supervised-families-'));
const NEW = { blobs: 'train', friedman: 'train', 'vega-more': 'held-out', rings: 'held-out', counts: 'held-out' } as const;
const names = Object.keys(NEW) as (keyof typeof NEW)[];
const PER_FAMILY = 8;
const drawn = Object.fromEntries(names.map((f) => [f, registerFamilyTasks(f, PER_FAMILY, 3)])) as Record<keyof typeof NEW, ExtraTask[]>;
const all = names.flatMap((f) => drawn[f]);
const defOf = (t: ExtraTask): SupervisedTaskDef => {
  assert.equal(t.kind, 'supervised');
  return t.def as SupervisedTaskDef;
};

test('the families are registered, supervised, with their split; every task (and its brief) carries it', () => {
  for (const f of names) {
    assert.equal(FAMILIES[f].kind, 'supervised', f);
    assert.equal(FAMILIES[f].split, NEW[f], f);
    for (const t of drawn[f]) {
      assert.equal(t.def.split, NEW[f], t.def.id);
      assert.equal(getPublicTask(t.def.id).brief.split, NEW[f], `${t.def.id}: the brief says ${NEW[f]}`);
    }
  }
});

test('the same seed gives the same tasks and rows; another seed other tasks; the tasks of one seed differ', () => {
  for (const f of names) {
    const brief = (t: ExtraTask): string => {
      const d = defOf(t);
      return JSON.stringify({ title: d.title, description: d.description, metric: d.metric, sources: d.sources.map((s) => s.description) });
    };
    const a = generateFamilyTasks(f, 5, 11);
    const b = generateFamilyTasks(f, 5, 11);
    const c = generateFamilyTasks(f, 5, 12);
    assert.deepEqual(
      a.map((t) => t.def.id),
      [0, 1, 2, 3, 4].map((i) => `${f}-fam-11-${i}`),
    );
    assert.deepEqual(a.map(brief), b.map(brief), `${f}: same seed, same briefs`);
    a.forEach((t, i) => assert.deepEqual(defOf(t).load(), defOf(b[i]).load(), `${t.def.id}: same rows`));
    assert.notDeepEqual(a.map(brief), c.map(brief), `${f}: another seed, other tasks`);
    assert.notDeepEqual(defOf(a[0]).load().y, defOf(c[0]).load().y, `${f}: another seed, other rows`);
    assert.ok(new Set(a.map(brief)).size > 1, `${f}: the tasks of one seed differ`);
  }
});

test('every baseline validates against its brief; the anchors are ordered (regression: the pool mean or median against an exact model)', () => {
  for (const t of all) {
    const { brief, baseline } = getPublicTask(t.def.id);
    const r = validateSpec(baseline, brief);
    assert.ok(r.ok, `${t.def.id}: ${r.ok ? '' : r.error.message}`);
    const a = getHiddenEvaluation(t.def.id).anchors();
    assert.ok(Number.isFinite(a.random) && a.reference > a.random, `${t.def.id}: ${a.random} < ${a.reference}`);
    const d = defOf(t);
    if (d.metric === 'rmse' || d.metric === 'mae') assert.equal(a.reference, 0);
    // About 0: the pool's mean is not the test rows' (further off on a small table of skewed counts, such as 170 test rows of census counts).
    if (d.metric === 'r2') assert.ok(Math.abs(a.random) < 0.1, `${t.def.id}: the pool mean scores R² ≈ 0 (${a.random})`);
  }
  assert.ok(drawn.friedman.some((t) => defOf(t).load().kind === 'regression'));
  assert.ok(drawn['vega-more'].some((t) => defOf(t).load().kind === 'regression') && drawn['vega-more'].some((t) => defOf(t).load().kind === 'classification'));
});

test('briefs are written from the parameters and carry no hidden row', () => {
  for (const t of all) {
    const text = JSON.stringify(getPublicTask(t.def.id));
    assert.doesNotMatch(text, /testFraction|heldOut/i);
    const { test: held } = getSupervisedEvaluation(t.def.id).heldOut();
    // Whole rows as a listing would write them, and values precise enough not to occur by chance.
    for (const row of held.x)
      for (const r of [row.join(','), row.join(', ')]) assert.ok(!text.includes(r), `${t.def.id}: the brief carries the held-out row ${r}`);
    const values = [...held.y, ...held.x.flat()].map(String).filter((v) => v.replace(/[-.]/g, '').length >= 6);
    for (const v of values) assert.ok(!text.includes(v), `${t.def.id}: the brief carries the held-out value ${v}`);
    assert.ok(getPublicTask(t.def.id).brief.description.length > 80);
  }
});

test('no row of the hidden test set reaches any source a job can receive (row by row)', () => {
  const key = (row: number[]): string => row.map((v) => v.toFixed(9)).join(',');
  for (const t of all) {
    const ev = getSupervisedEvaluation(t.def.id);
    const { pool, test: held } = ev.heldOut();
    const poolKeys = new Set(pool.x.map(key));
    const testOnly = new Set(held.x.map(key).filter((k) => !poolKeys.has(k)));
    assert.ok(testOnly.size > held.x.length * 0.5, `${t.def.id}: ${testOnly.size} of ${held.x.length} test rows checkable`);
    const data = ev.jobData(defOf(t).sources.map((s) => s.id));
    for (const [id, src] of Object.entries(data.sources)) {
      assert.ok(src.x.length > 0, `${t.def.id}/${id} is not empty`);
      for (const row of src.x) assert.ok(!testOnly.has(key(row)), `${t.def.id}/${id} contains a test row`);
    }
  }
});

test('counts: every target is a count (non-negative integers), stated as one, on tables no other family uses', () => {
  const others = [TABULAR_CONFIG, VEGA_MORE_CONFIG].flatMap((c) => c.bases.map((b) => b.name));
  for (const b of COUNTS_CONFIG.bases) {
    assert.ok(!others.includes(b.name), `${b.name} is used by another family`);
    const d = b.load();
    assert.equal(d.kind, 'regression', b.name);
    assert.ok(
      d.y.every((v) => Number.isInteger(v) && v >= 0),
      `${b.name}: counts`,
    );
    assert.match(d.descriptions[d.target], /^how many .*: a count, from /);
  }
  for (const t of drawn.counts) {
    const d = defOf(t);
    assert.ok(['rmse', 'mae', 'r2'].includes(d.metric), `${t.def.id}: ${d.metric}`);
    assert.match(getPublicTask(t.def.id).brief.description, /a count, from/);
    const data = d.load();
    if (data.name === 'jobs') assert.ok(data.features.includes('share'), `${t.def.id} keeps the occupation's share`);
    if (data.name === 'population') assert.ok(data.features.includes('age'), `${t.def.id} keeps the age group`);
  }
});

const scored: { id: string; dir: string; score: Score }[] = [];
for (const f of names) {
  test(`${f}: the baseline job trains for real and scores above the trivial anchor on the hidden test rows`, async () => {
    const t = drawn[f][0];
    const { brief, baseline } = getPublicTask(t.def.id);
    const a = await runJob(baseline, brief, { outDir: join(tmp, t.def.id), data: dataForJob(t.def.id, baseline) });
    assert.equal(a.status, 'succeeded');
    const s = scoreArtifact(t.def.id, a.dir);
    assert.ok(s.normalized > 0 && s.normalized <= 1.0001, `${t.def.id} (${defOf(t).metric}): normalized ${s.normalized}, raw ${s.raw}`);
    scored.push({ id: t.def.id, dir: a.dir, score: s });
  });
}

test('a scorer thread draws the same family tasks again and gives the same scores', async () => {
  assert.equal(scored.length, names.length);
  const scorer = new Scorer({ workers: 1 });
  try {
    for (const { id, dir, score } of scored) {
      const there = await scorer.score(id, dir);
      assert.ok(there.ok, JSON.stringify(there));
      if (there.ok) assert.deepEqual(there.score, score, id);
    }
  } finally {
    await scorer.close();
  }
});

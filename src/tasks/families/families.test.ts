import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAMILIES, generateFamilyTasks, registerFamilyTasks } from './index.js';
import { Scorer } from '../../outer/scoring/scorer-pool.js';
import { builtInTaskIds } from '../extra.js';
import { familyControlEvaluation } from './evaluate.js';

import { getPublicTask, listTasks } from '../briefs.js';
import { getHiddenEvaluation, getSupervisedEvaluation } from '../hidden.js';
import { heldOutSeeds } from '../secret.js';
import { validateSpec } from '../../inner/spec-check.js';
import { runJob } from '../../inner/train.js';
import { dataForJob, scoreArtifact } from '../../outer/scoring/hidden-score.js';
import type { JobSpecInput } from '../../spec/schema.js';

// The held-out episodes, rows and deployment physics depend on the secret: these tests use their own.
process.env.RRL_EVAL_SECRET = 'families-test-secret';

const tmp = mkdtempSync(join(tmpdir(), 'rrl-families-'));
const names = Object.keys(FAMILIES);
const PER_FAMILY = 12;
const all = names.flatMap((f) => registerFamilyTasks(f, PER_FAMILY, 7));

/** Everything public about a task, as text, plus its definition's drawable content. */
const publicText = (id: string): string => JSON.stringify(getPublicTask(id));

test('the families, each with a kind, a split and a description; an unknown family is an error naming the known ones', () => {
  for (const name of ['cartpole', 'synthetic', 'tabular']) assert.ok(names.includes(name), name);
  for (const f of Object.values(FAMILIES)) assert.ok(f.description.length > 30);
  for (const t of all) assert.equal(t.def.split, FAMILIES[t.def.id.replace(/-fam-.*$/, '')].split, `${t.def.id}: its family's split`);
  assert.throws(() => generateFamilyTasks('nope', 1, 1), /unknown task family "nope"; known families: .*cartpole/);
  assert.throws(() => generateFamilyTasks('cartpole', -1, 1), /count must be a non-negative integer/);
});

test('the same seed gives the same tasks; another seed gives other tasks', () => {
  for (const f of names) {
    const a = generateFamilyTasks(f, 6, 7).map((t) => publicOf(t.def.id, t));
    const b = generateFamilyTasks(f, 6, 7).map((t) => publicOf(t.def.id, t));
    const c = generateFamilyTasks(f, 6, 8).map((t) => publicOf(t.def.id, t));
    assert.deepEqual(a, b, `${f}: same seed, same tasks`);
    const strip = (s: string[]): string[] => s.map((x) => x.replace(/-fam-\d+-\d+/g, ''));
    assert.notDeepEqual(strip(a), strip(c), `${f}: another seed, other tasks`);
    assert.ok(new Set(strip(a)).size > 1, `${f}: the tasks of one seed differ from each other`);
  }
});

test('a draw registered again, or a smaller one, gives the first tasks of the draw: the same as drawing them anew', () => {
  for (const f of names) {
    const again = registerFamilyTasks(f, PER_FAMILY, 7).map((t) => publicOf(t.def.id, t));
    const fewer = registerFamilyTasks(f, 3, 7).map((t) => publicOf(t.def.id, t));
    const fresh = generateFamilyTasks(f, PER_FAMILY, 7).map((t) => publicOf(t.def.id, t));
    assert.deepEqual(again, fresh, f);
    assert.deepEqual(fewer, fresh.slice(0, 3), f);
  }
});

/** A generated task's definition as comparable text (description, title, baseline, sources). */
function publicOf(_id: string, t: ReturnType<typeof generateFamilyTasks>[number]): string {
  const d = t.def as { title: string; description: string; baseline: unknown; sources?: { id: string; description: string }[] };
  return JSON.stringify({ title: d.title, description: d.description, baseline: d.baseline, sources: d.sources?.map((s) => s.description) });
}

test('ids are unique, never a built-in id, and registered tasks join the public list after the built-in ones', () => {
  const ids = all.map((t) => t.def.id);
  assert.equal(new Set(ids).size, ids.length);
  const builtIn = new Set(builtInTaskIds());
  for (const id of ids) assert.ok(!builtIn.has(id), id);
  const listed = listTasks().map((t) => t.brief.id);
  assert.deepEqual(listed.slice(0, builtIn.size), builtInTaskIds());
  assert.deepEqual(listed.slice(builtIn.size), ids);
});

test('every generated brief validates its baseline spec and has ordered, explained anchors', () => {
  for (const t of all) {
    const { brief, baseline } = getPublicTask(t.def.id);
    const r = validateSpec(baseline, brief);
    assert.ok(r.ok, `${t.def.id}: ${r.ok ? '' : r.error.message}`);
    assert.ok(brief.metric.length > 30);
    assert.ok(brief.description.length > 80);
  }
  for (const f of names) {
    const [t] = generateFamilyTasks(f, 1, 7);
    const a = getHiddenEvaluation(t.def.id).anchors();
    assert.ok(Number.isFinite(a.random) && a.reference > a.random, `${t.def.id}: ${a.random} < ${a.reference}`);
    assert.ok(a.how.length > 20);
  }
});

test('briefs are written from the parameters and never carry held-out numbers', () => {
  for (const t of all) {
    const text = publicText(t.def.id);
    assert.doesNotMatch(text, /heldOut|hidden seed|testFraction/i);
    for (const s of heldOutSeeds(t.def.id, 5)) assert.ok(!text.includes(String(s)), `${t.def.id} carries a held-out seed`);
    if (t.kind === 'control-sim') {
      const s = familyControlEvaluation(t);
      const nominal = s.params!;
      for (const v of Object.values(nominal)) assert.ok(text.includes(String(v)), `${t.def.id} states its nominal physics ${v}`);
      assert.match(text, new RegExp(t.def.maxEnvSteps.toLocaleString('en-US')));
      const deployed = s.deployment?.('families-test-secret') ?? {}; // a family without a shift (mountain-car) has none
      for (const [name, v] of Object.entries(deployed))
        if (v !== nominal[name]) assert.ok(!text.includes(String(v)), `${t.def.id} carries its deployment ${name}`);
    }
  }
});

test('cartpole: the deployment physics come from the secret, within the stated band', () => {
  const shifted = all.filter((t) => t.kind === 'control-sim' && /±(\d+)%/.test(t.def.description));
  assert.ok(shifted.length > 0, 'some drawn tasks have a deployment shift');
  for (const t of shifted) {
    if (t.kind !== 'control-sim') continue;
    const share = Number(/±(\d+)%/.exec(t.def.description)![1]) / 100;
    const s = familyControlEvaluation(t);
    const a = s.deployment!('secret-a');
    const b = s.deployment!('secret-b');
    assert.notDeepEqual(a, b, 'another secret, other deployment physics');
    assert.deepEqual(a, s.deployment!('secret-a'));
    for (const [name, v] of Object.entries(s.params!)) {
      assert.ok(Math.abs(a[name] - v) <= share * v + 1e-9, `${t.def.id}/${name}: ${a[name]} within ±${share} of ${v}`);
    }
  }
});

test('supervised families: no row of the hidden test set reaches any source a job can receive (row by row)', () => {
  const key = (row: number[]): string => row.map((v) => v.toFixed(9)).join(',');
  let checked = 0;
  let total = 0;
  for (const t of all.filter((x) => x.kind === 'supervised')) {
    if (t.kind !== 'supervised') continue;
    const ev = getSupervisedEvaluation(t.def.id);
    const { pool, test: held } = ev.heldOut();
    assert.ok(held.x.length > 0 && pool.x.length > 0);
    const poolKeys = new Set(pool.x.map(key));
    // Rows whose values also occur in the pool are genuine duplicates (few features kept), not leaks.
    const testOnly = new Set(held.x.map(key).filter((k) => !poolKeys.has(k)));
    assert.ok(testOnly.size > 0, `${t.def.id}: some test rows are not in the pool`);
    checked += testOnly.size;
    total += held.x.length;
    const data = ev.jobData(t.def.sources.map((s) => s.id));
    for (const [id, src] of Object.entries(data.sources)) {
      for (const row of src.x) assert.ok(!testOnly.has(key(row)), `${t.def.id}/${id} contains a test row`);
    }
  }
  assert.ok(checked > total * 0.7, `${checked} of ${total} test rows are checkable (not duplicates of pool rows)`);
});

/** Trains `spec` for real and scores it on the hidden evaluation. */
async function trainAndScore(id: string, patch: (s: JobSpecInput) => JobSpecInput): Promise<{ raw: number; normalized: number }> {
  const { brief, baseline } = getPublicTask(id);
  const spec = patch(structuredClone(baseline));
  assert.ok(validateSpec(spec, brief).ok);
  const a = await runJob(spec, brief, { outDir: join(tmp, id), data: dataForJob(id, spec) });
  const here = scoreArtifact(id, a.dir);
  // The scorer thread draws the same families again and scores the same way.
  const scorer = new Scorer({ workers: 1 });
  try {
    const there = await scorer.score(id, a.dir);
    assert.ok(there.ok, JSON.stringify(there));
    if (there.ok) assert.deepEqual(there.score, here);
  } finally {
    await scorer.close();
  }
  return here;
}

test('cartpole family: a short real job trains on the drawn physics and is scored on held-out deployment episodes', async () => {
  const t = all.find((x) => x.kind === 'control-sim')!;
  const s = await trainAndScore(t.def.id, (spec) => ({ ...spec, budget: { envSteps: 4096, targetReturn: null } }));
  assert.ok(Number.isFinite(s.raw) && s.raw >= 1 && s.raw <= 500, `hidden mean return ${s.raw}`);
  assert.ok(Number.isFinite(s.normalized));
});

for (const family of ['tabular', 'synthetic']) {
  test(`${family} family: a short real job trains on its sources and is scored on the hidden test rows`, async () => {
    const t = all.find((x) => x.def.id.startsWith(`${family}-fam-`))!;
    const s = await trainAndScore(
      t.def.id,
      (spec) => ({ ...spec, algorithm: { ...(spec.algorithm as object), epochs: 5 }, budget: { examples: 3000, targetReturn: null } }) as JobSpecInput,
    );
    assert.ok(Number.isFinite(s.raw) && Number.isFinite(s.normalized), `raw ${s.raw}, normalized ${s.normalized}`);
    assert.ok(s.normalized > -1 && s.normalized <= 1.0001, `normalized ${s.normalized}`);
  });
}

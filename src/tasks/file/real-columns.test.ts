import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { registerTaskDir } from './register.js';
import { loadTaskFile, TaskFileError } from './load.js';
import { getPublicTask } from '../briefs.js';
import { trainAgent } from '../../outer/loop.js';
import { LocalExecutor } from '../../run/local.js';
import { Store } from '../../store/store.js';
import { ScriptedAgent } from '../../testing/scripted-agent.js';
import { getSupervisedEvaluation } from '../hidden.js';
import { scorePolicy } from '../../outer/scoring/hidden-score.js';
import type { ModelFile } from '../../inner/model.js';
import { taskDir, toCsv, writeTask } from '../../testing/task-files.js';
import { newTaskFromData } from './new.js';

/**
 * A table shaped like a clinical trial's: many yes/no columns, a site code, an age with a few
 * empty cells, a lab value that is almost always empty, and a rare outcome.
 */
function trialRows(n: number): Record<string, string | number>[] {
  return Array.from({ length: n }, (_, i) => {
    const yes = (k: number): string => (Math.sin(i * (1.3 + k * 0.7) + k) > 0.2 ? 'yes' : 'no');
    const age = 40 + ((i * 17) % 45);
    const site = ['north', 'south', 'east', 'west', 'centre', 'coast'][(i * 7) % 6];
    const row: Record<string, string | number> = { id: `P${1000 + i}`, age: i % 19 === 0 ? '' : age, site, lab: i % 20 === 0 ? (i % 7) + 0.5 : 'NA' };
    for (let k = 0; k < 10; k++) row[`sym${k}`] = yes(k);
    const risk = (age - 60) / 10 + (row.sym0 === 'yes' ? 1.5 : 0) + (row.sym3 === 'yes' ? 1 : 0) + (site === 'coast' ? 1 : 0);
    row.died = risk > 3 ? 'yes' : 'no';
    return row;
  });
}

const dir = taskDir('rrl-real-columns-');
const rows = trialRows(360);
writeFileSync(join(dir, 'trial.csv'), toCsv(rows));
const features = ['age', 'site', 'lab', ...Array.from({ length: 10 }, (_, k) => `sym${k}`)];
writeTask(dir, 'trial.json', {
  id: 'trial-own',
  title: 'Death in a trial from its patients’ records',
  description: 'Patients of a clinical trial: symptoms as yes/no, the site, the age and one lab value that is rarely measured.',
  kind: 'supervised',
  data: { file: 'trial.csv', target: 'died', type: 'classification', features },
  metric: 'macro-f1',
  caps: { maxExamples: 20_000, maxWallSeconds: 60 },
  baseline: { epochs: 30, examples: 6000, hidden: [16], learningRate: 0.01 },
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('a table with categorical columns and empty cells keeps its columns and its rows', async () => {
  const loaded = await loadTaskFile(join(dir, 'trial.json'));
  assert.equal(loaded.extra.kind, 'supervised');
  if (loaded.extra.kind !== 'supervised') return;
  const d = loaded.extra.def.load();
  assert.equal(d.x.length, rows.length, 'no row dropped');
  assert.deepEqual(
    d.columns?.map((c) => c.kind),
    features.map((f) => (f === 'age' || f === 'lab' ? 'numeric' : 'categorical')),
  );
  assert.ok(
    loaded.notes.some((n) => /column "site" read as categorical \(6 levels\)/.test(n)),
    loaded.notes.join(' | '),
  );
  await registerTaskDir(dir);
  const brief = getPublicTask('trial-own').brief;
  const lab = brief.supervised?.columns?.find((c) => c.name === 'lab');
  assert.ok(lab && lab.missing > 0.9, 'the brief says how empty the lab column is');
});

test('hostile columns: a level per row, a column all empty, a copy of the target: one line each', async () => {
  const bad = rows.map((r) => ({ ...r, empty: '', copy: r.died === 'yes' ? 'Y' : 'N' }));
  const own = taskDir('rrl-hostile-columns-');
  test.after(() => rmSync(own, { recursive: true, force: true }));
  writeFileSync(join(own, 'bad.csv'), toCsv(bad));
  const file = writeTask(own, 'bad.json', {
    id: 'bad-own',
    title: 'Hostile columns',
    description: 'Columns a practitioner should not use as features.',
    kind: 'supervised',
    data: { file: 'bad.csv', target: 'died', type: 'classification', features: ['age', 'id', 'empty', 'copy'] },
    metric: 'accuracy',
  });
  const err = await loadTaskFile(file).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(err instanceof TaskFileError, String(err));
  const lines = err.problems;
  for (const l of lines) assert.ok(!l.includes('\n') && l.length < 300, l);
  assert.ok(
    lines.some((l) => /features\[1\]: column "id" has 360 different texts/.test(l)),
    lines.join(' | '),
  );
  assert.ok(
    lines.some((l) => /features\[2\]: column "empty" has no value in any row/.test(l)),
    lines.join(' | '),
  );
  // Once the unusable columns are left out, a recoded copy of the target is refused as a leak.
  const copy = writeTask(own, 'copy.json', {
    ...JSON.parse(readFileSync(file, 'utf8')),
    id: 'copy-own',
    data: { file: 'bad.csv', target: 'died', type: 'classification', features: ['age', 'copy'] },
  });
  const leak = await loadTaskFile(copy).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(leak instanceof TaskFileError && leak.problems.some((l) => /features\[1\]: column "copy" decides the target/.test(l)), String(leak));
});

test('jobs train on categorical columns and empty cells by every decision; the model reads the table and the scorer needs its encoding', async () => {
  await registerTaskDir(dir);
  const run = join(dir, 'run');
  const executor = new LocalExecutor({ workers: 1 });
  const withColumns = (columns: Record<string, unknown>) => () => {
    const spec = structuredClone(getPublicTask('trial-own').baseline) as Record<string, any>;
    spec.dataset.columns = columns;
    spec.seed = 5;
    return spec;
  };
  try {
    const summary = await trainAgent(run, { tasks: ['trial-own'], agent: 'random', iterations: 1, group: 3, seed: 1, taskDir: dir }, executor, {
      agent: new ScriptedAgent([
        withColumns({ categorical: 'target', missing: 'drop-row' }),
        withColumns({ categorical: 'frequency', missing: 'mean', indicator: false }),
        withColumns({ categorical: 'one-hot', maxLevels: 2, missing: 'constant' }),
      ]),
    });
    const store = new Store(run);
    const jobs = store.jobs(summary.run);
    store.close();
    for (const j of jobs) {
      assert.equal(j.status, 'succeeded', j.error ?? '');
      assert.ok(j.normalized !== null && Number.isFinite(j.normalized), `${j.kind} ${j.normalized}`);
    }
    const base = jobs.find((j) => j.kind === 'baseline')!;
    assert.ok(base.normalized! > 0.2, `baseline normalised macro-F1 ${base.normalized}`);
    const model = JSON.parse(readFileSync(join(base.artifactDir!, 'model.json'), 'utf8')) as ModelFile;
    assert.ok(model.columns, 'the fitted encoding is saved in the artifact');
    assert.ok(model.features.includes('site=coast') && model.features.includes('lab:missing'), model.features.join(','));
    // A model that drops its encoding cannot be scored on coded rows: a one-line reason, not a number.
    const { columns: _, ...bare } = model;
    assert.throws(() => scorePolicy('trial-own', bare as ModelFile), /must say how it reads them/);
    const test = getSupervisedEvaluation('trial-own').heldOut().test;
    assert.ok(test.x.length >= 100);
  } finally {
    await executor.close();
  }
});

test('rrl task new chooses as a practitioner would: categorical columns kept, the mostly empty and the id left out and said, a metric the majority cannot max', async () => {
  const own = taskDir('rrl-task-new-');
  test.after(() => rmSync(own, { recursive: true, force: true }));
  writeFileSync(join(own, 'trial.csv'), toCsv(rows));
  const made = await newTaskFromData({ data: join(own, 'trial.csv'), target: 'died', out: join(own, 'trial.json') });
  const data = made.task.data as { features: string[] };
  assert.deepEqual(data.features, ['age', 'site', ...Array.from({ length: 10 }, (_, k) => `sym${k}`)]);
  const notes = made.notes.join(' | ');
  assert.match(notes, /from 12 of 14 column\(s\) on 360 of 360 rows/);
  assert.match(notes, /left out \(mostly empty\): lab \(95 % empty\)/);
  assert.match(notes, /left out \(a different value on most rows: an identifier or free text\): id/);
  assert.match(notes, /kept with empty cells: age \(5 %\)/);
  const share = rows.filter((r) => r.died === 'yes').length / rows.length;
  assert.ok(share < 0.2, `died share ${share}`);
  assert.equal(made.task.metric, 'macro-f1');
  assert.match(notes, /metric macro-f1: the rarest class is 18 %/);
  const loaded = await loadTaskFile(made.out);
  assert.equal(loaded.extra.kind === 'supervised' && loaded.extra.def.load().x.length, 360);
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TaskDirError, registerTaskDir, registeredTaskDirs } from './register.js';
import { loadTaskFile } from './load.js';
import { DistinctRows, NearCopyIndex } from './near-copies.js';
import { getPublicTask, listTasks } from '../briefs.js';
import { getSupervisedEvaluation } from '../hidden.js';
import { useEvalSecret } from '../secret.js';
import { dataForJob } from '../../outer/scoring/hidden-score.js';
import { classificationTask, syntheticRows, taskDir, toCsv, writeTask } from '../../testing/task-files.js';

const key = (row: number[]): string => row.map((v) => v.toFixed(9)).join(',');

/** Whether a row is a near-copy of one of `rows` under the main file's rule, by brute force. */
function nearAny(main: number[][], rows: number[][], row: number[]): boolean {
  const { std, tolerance, trimmed } = new NearCopyIndex(new DistinctRows(main)).rule;
  const over = (h: number[], t: number): number => row.filter((v, j) => Math.abs(v - h[j]) / std[j] > t).length;
  return rows.some((h) => over(h, tolerance) === 0 || (trimmed !== null && over(h, trimmed.tolerance) <= trimmed.ignore));
}

// The main file (200 rows) and two sources of the user's: the same 200 points labelled by a
// crowd (a third of the labels flipped), and 80 points of their own.
const dir = taskDir();
writeFileSync(join(dir, 'crowd.csv'), toCsv(syntheticRows(200).map((r, i) => ({ ...r, kind: i % 3 === 0 ? (r.kind === 'up' ? 'down' : 'up') : r.kind }))));
writeFileSync(join(dir, 'more.csv'), toCsv(syntheticRows(80, 1000)));
writeTask(
  dir,
  'updown.json',
  classificationTask('updown-own', {
    data: {
      file: 'data.csv',
      target: 'kind',
      type: 'classification',
      features: ['a', 'b', 'c'],
      sources: [
        { id: 'crowd', file: 'crowd.csv', description: 'every point, labelled by a crowd; about a third of the labels are wrong' },
        { id: 'more', file: 'more.csv', description: '80 further points, labels checked' },
      ],
    },
  }),
);
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('a registered task directory puts its tasks next to the built-in ones, in both registries', async () => {
  const before = listTasks().length;
  const loaded = await registerTaskDir(dir);
  assert.equal(loaded.length, 1);
  assert.equal(listTasks().length, before + 1);
  const { brief, baseline } = getPublicTask('updown-own');
  assert.equal(brief.kind, 'supervised');
  assert.equal(brief.split, 'held-out');
  assert.deepEqual(
    brief.supervised!.sources.map((s) => s.id),
    // Six sources in all (the embedded agents' slots): the catalogue keeps the first three it has room for, clean-small last.
    ['main', 'crowd', 'more', 'noisy-large', 'shifted', 'imbalanced'],
  );
  assert.deepEqual(brief.supervised!.target.classes, ['down', 'up']);
  assert.deepEqual((baseline.dataset as { sources: { id: string }[] }).sources, [{ id: 'main', weight: 1 }]);
  assert.ok(registeredTaskDirs().includes(dir));
  await registerTaskDir(dir); // again: the same directory is registered once
  assert.equal(listTasks().length, before + 1);
});

test('no row of the hidden test set reaches any source a job can receive (row by row)', async () => {
  await registerTaskDir(dir);
  const ev = getSupervisedEvaluation('updown-own');
  const { pool, test: held } = ev.heldOut();
  assert.equal(pool.x.length + held.x.length, 200);
  assert.equal(held.x.length, 60, 'round(0.3 · count) rows of each class');
  const testKeys = new Set(held.x.map(key));
  assert.equal(testKeys.size, held.x.length, 'the synthetic rows are distinct');
  // What the executor hands a job: dataForJob on a spec naming every source, the standard catalogue's too.
  const ids = getPublicTask('updown-own').brief.supervised!.sources.map((s) => s.id);
  const data = dataForJob('updown-own', { dataset: { sources: ids.map((id) => ({ id })) } })!;
  assert.deepEqual(Object.keys(data.sources), ids);
  let rows = 0;
  let catalogRows = 0;
  for (const [id, src] of Object.entries(data.sources)) {
    for (const row of src.x) {
      rows++;
      assert.ok(!testKeys.has(key(row)), `source ${id} holds a hidden test row`);
    }
  }
  assert.equal(data.sources.main.x.length, 140);
  // The crowd copy loses the 60 hidden rows, and the few pool rows that nearly repeat one (the synthetic points are quasi-periodic).
  const mainX = [...pool.x, ...held.x];
  const crowdKept = pool.x.filter((r) => !nearAny(mainX, held.x, r)).length;
  assert.ok(crowdKept >= 130, `${crowdKept} pool rows are not near a hidden row`);
  assert.equal(data.sources.crowd.x.length, crowdKept);
  const moreKept = syntheticRows(80, 1000).filter((r) => !nearAny(mainX, held.x, [r.a, r.b, r.c])).length;
  assert.ok(moreKept >= 76);
  assert.equal(data.sources.more.x.length, moreKept);
  for (const id of ids.slice(3)) catalogRows += data.sources[id].x.length;
  assert.ok(catalogRows > 0);
  assert.equal(rows, 140 + crowdKept + moreKept + catalogRows);
  // The crowd's labels are its own (noisy), not the main file's.
  const poolLabel = new Map(pool.x.map((r, i) => [key(r), pool.y[i]]));
  const differ = data.sources.crowd.x.filter((r, i) => poolLabel.get(key(r)) !== data.sources.crowd.y[i]).length;
  assert.ok(differ > 30 && differ < 60, `${differ} crowd labels differ from the main file`);
});

test('a second directory with an id already taken, or a built-in id, is refused with the file named', async () => {
  const other = taskDir('rrl-tasks-other-');
  try {
    writeTask(other, 'again.json', classificationTask('updown-own'));
    await assert.rejects(
      registerTaskDir(other),
      (e: Error) => e instanceof TaskDirError && /again\.json: id "updown-own" is already used by .*updown\.json/.test(e.message),
    );
    writeTask(other, 'again.json', classificationTask('two-moons'));
    writeTask(other, 'twin.json', classificationTask('two-moons'));
    await assert.rejects(
      registerTaskDir(other),
      (e: Error) =>
        e instanceof TaskDirError &&
        e.message.split('\n').length === 2 &&
        e.message.split('\n').every((l) => /"two-moons" clashes with a built-in task/.test(l)),
    );
    writeTask(other, 'again.json', classificationTask('dup-a'));
    writeTask(other, 'twin.json', classificationTask('dup-a'));
    await assert.rejects(registerTaskDir(other), /twin\.json: id "dup-a" is also the id of .*again\.json/);
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
});

test('the hidden split is drawn from the evaluation secret: another secret holds out other rows', async () => {
  await registerTaskDir(dir);
  const ev = getSupervisedEvaluation('updown-own');
  const first = new Set(ev.heldOut().test.x.map(key));
  useEvalSecret('another installation');
  const second = ev.heldOut().test.x.map(key);
  assert.equal(second.length, first.size);
  assert.ok(second.filter((k) => first.has(k)).length < second.length * 0.6, 'most held-out rows change with the secret');
  const data = ev.jobData(['crowd']);
  for (const row of data.sources.crowd.x) assert.ok(!second.includes(key(row)));
});

test('near-copies of hidden rows are dropped from a source: rounded, jittered, shuffled, duplicated; the notes and the history count them', async () => {
  const other = taskDir('rrl-tasks-near-');
  try {
    // Every main row, its features rounded to 3 decimals or jittered by 1e-4, in a shuffled order, 40 of them twice, labels at random.
    const main = syntheticRows(200);
    const from = [...main.keys(), ...Array.from({ length: 40 }, (_, k) => (k * 37) % 200)];
    for (let i = from.length - 1; i > 0; i--) {
      const j = (i * 7919) % (i + 1);
      [from[i], from[j]] = [from[j], from[i]];
    }
    const copy = from.map((i, k) => {
      const r = main[i];
      const f = k % 2 ? (v: number): number => Number(v.toFixed(3)) : (v: number): number => v + 1e-4 * Math.sin(k + v);
      return { a: f(r.a), b: f(r.b), c: f(r.c), kind: (k * 13) % 3 === 0 ? 'up' : 'down', y: r.y };
    });
    writeFileSync(join(other, 'near.csv'), toCsv(copy));
    const task = classificationTask('near-own', {
      data: {
        file: 'data.csv',
        target: 'kind',
        type: 'classification',
        features: ['a', 'b', 'c'],
        sources: [
          { id: 'near', file: 'near.csv', description: 'the same points, exported again' },
          { id: 'more', file: 'more.csv', description: 'other points' },
        ],
      },
    });
    writeFileSync(join(other, 'more.csv'), toCsv(syntheticRows(300, 1000)));
    writeTask(other, 'near.json', task);
    const loaded = await loadTaskFile(join(other, 'near.json'), other);
    const note = loaded.notes.find((n) => n.includes('near.csv'));
    assert.match(
      note ?? '',
      /^240 of 240 rows of near\.csv are near-copies of rows of data\.csv \(within [0-9.e-]+ std of a main row in every feature(, or [0-9.e-]+ std in all but 1)?\); those of hidden test rows \(about 30 %\) are dropped from source near$/,
    );
    await registerTaskDir(other);
    const ev = getSupervisedEvaluation('near-own');
    const { pool, test: hiddenRows } = ev.heldOut();
    const held = new Set(hiddenRows.x.map(key));
    const hidden = from.filter((i) => held.has(key([main[i].a, main[i].b, main[i].c]))).length;
    assert.ok(hidden > 50, `${hidden} copy rows of hidden rows`);
    // Dropped: the copies of hidden rows, and those of the few pool rows that nearly repeat one.
    const mainX = [...pool.x, ...hiddenRows.x];
    const kept = copy.filter((r) => !nearAny(mainX, hiddenRows.x, [r.a, r.b, r.c])).length;
    assert.ok(kept <= 240 - hidden && kept >= 240 - hidden - 10, `${kept} kept, ${hidden} copies of hidden rows`);
    const near = ev.source('near');
    assert.equal(near.x.length, kept);
    assert.match(
      near.history![0],
      new RegExp(
        `^source near: ${kept} of 240 rows \\(${240 - kept} near-copies of hidden test rows dropped: within [0-9.e-]+ std of a main row in every feature`,
      ),
    );
    for (const r of near.x) assert.ok(!nearAny(mainX, hiddenRows.x, r));
    // An honest source of other points keeps almost all of them.
    const more = ev.source('more');
    assert.ok(more.x.length >= 0.97 * 300, `${more.x.length} of 300 other points kept`);
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
});

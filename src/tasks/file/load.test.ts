import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskFileError, loadTaskFile } from './load.js';
import { MAX_CELLS, MAX_DATA_BYTES } from './table.js';
import { classificationTask, syntheticRows, taskDir, toCsv, writeTask } from '../../testing/task-files.js';

const dir = taskDir();
const outside = mkdtempSync(join(tmpdir(), 'rrl-outside-'));
writeFileSync(join(outside, 'secret.csv'), toCsv(syntheticRows(50)));
test.after(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

let n = 0;
/** Loads a task file that must fail; returns its problems, each checked to be one line naming its file. */
async function problems(task: Record<string, unknown> | string, root = dir): Promise<string[]> {
  const file = writeTask(dir, `t${n++}.json`, task);
  try {
    await loadTaskFile(file, root);
  } catch (err) {
    assert.ok(err instanceof TaskFileError, `expected a TaskFileError, got ${(err as Error).stack}`);
    assert.ok(err.problems.length > 0);
    for (const p of err.problems) assert.ok(!p.includes('\n') && p.length < 400, `one short line: ${p}`);
    for (const line of err.message.split('\n')) assert.match(line, /t\d+\.json: /);
    return err.problems;
  }
  assert.fail('the task file loaded');
}
/** The standard catalogue a task file gets from its training part (classification, a numeric feature to shift along). */
const CATALOG = ['clean-small', 'noisy-large', 'shifted', 'imbalanced', 'duplicated', 'augmented'];
const data = (patch: Record<string, unknown>): Record<string, unknown> => ({ ...(classificationTask('x').data as object), ...patch });

test('a valid file loads into a task whose brief names the features, target and catalogue', async () => {
  const t = await loadTaskFile(writeTask(dir, 'ok.json', classificationTask('updown')), dir);
  assert.equal(t.extra.def.id, 'updown');
  assert.equal(t.extra.kind, 'supervised');
  if (t.extra.kind !== 'supervised') return;
  const d = t.extra.def.load();
  assert.deepEqual(d.features, ['a', 'b', 'c']);
  assert.deepEqual(d.classes, ['down', 'up']);
  assert.equal(d.x.length, 200);
  assert.equal(d.descriptions.a, 'first coordinate');
  assert.deepEqual(
    t.extra.def.sources.map((s) => s.id),
    ['main', ...CATALOG.filter((id) => id !== 'clean-small')],
  );
  assert.match(t.notes[0], /classification of "kind" from 3 feature\(s\) on 200 rows \(60 held out/);
  assert.match(t.notes[0], /sources main, noisy-large, shifted, imbalanced, duplicated, augmented;/);
});

test('the standard catalogue: left out with "catalog": false; a source of the user named after one takes its place; six sources at most', async () => {
  const none = await loadTaskFile(writeTask(dir, 'bare.json', classificationTask('bare', { data: data({ catalog: false }) })), dir);
  assert.deepEqual(none.extra.kind === 'supervised' && none.extra.def.sources.map((s) => s.id), ['main']);
  writeFileSync(join(dir, 'crowd.csv'), readFileSync(join(dir, 'data.csv')));
  const own = await loadTaskFile(
    writeTask(
      dir,
      'own.json',
      classificationTask('own', { data: data({ sources: [{ id: 'noisy-large', file: 'crowd.csv', description: 'our crowd labels' }] }) }),
    ),
    dir,
  );
  if (own.extra.kind !== 'supervised') return assert.fail('supervised');
  assert.deepEqual(
    own.extra.def.sources.map((s) => s.id),
    ['main', 'noisy-large', ...CATALOG.filter((id) => id !== 'noisy-large' && id !== 'clean-small')],
  );
  assert.equal(own.extra.def.sources[1].description, 'our crowd labels');
});

test('paths that lead outside the task directory: "..", absolute, a symlinked file, a symlinked folder', async () => {
  assert.match(
    (await problems(classificationTask('p1', { data: data({ file: '../secret.csv' }) })))[0],
    /^data\.file: "\.\.\/secret\.csv" (does not exist|leads outside the task directory)/,
  );
  mkdirSync(join(dir, 'sub'), { recursive: true });
  const viaDots = await problems(classificationTask('p2', { data: data({ file: `sub/../../${join(outside, 'secret.csv').split('/').slice(-2).join('/')}` }) }));
  assert.match(viaDots[0], /^data\.file: .* leads outside the task directory/);
  assert.match(
    (await problems(classificationTask('p3', { data: data({ file: join(outside, 'secret.csv') }) })))[0],
    /^data\.file: ".*secret\.csv" is an absolute path/,
  );
  symlinkSync(join(outside, 'secret.csv'), join(dir, 'link.csv'));
  assert.match(
    (await problems(classificationTask('p4', { data: data({ file: 'link.csv' }) })))[0],
    /^data\.file: "link\.csv" leads outside the task directory .* \(through a link to .*secret\.csv\)/,
  );
  symlinkSync(outside, join(dir, 'linkdir'));
  assert.match(
    (await problems(classificationTask('p5', { data: data({ file: 'linkdir/secret.csv' }) })))[0],
    /^data\.file: "linkdir\/secret\.csv" leads outside/,
  );
  // An extra source is held to the same rule.
  const extra = await problems(classificationTask('p6', { data: data({ sources: [{ id: 'crowd', file: '../../etc/passwd', description: 'a crowd' }] }) }));
  assert.match(extra[0], /^data\.sources\[0\]\.file: "\.\.\/\.\.\/etc\/passwd" (does not exist|leads outside)/);
  // A folder or a device is not a data file.
  assert.match((await problems(classificationTask('p7', { data: data({ file: 'sub' }) })))[0], /^data\.file: "sub" is not a regular file/);
});

test('a data file over the size cap, and an over-long task file', async () => {
  const big = join(dir, 'big.csv');
  writeFileSync(big, 'a,b,c,kind\n');
  truncateSync(big, MAX_DATA_BYTES + 10);
  assert.match((await problems(classificationTask('big', { data: data({ file: 'big.csv' }) })))[0], /^data\.file: big\.csv: 67108874 bytes is over the limit/);
  const huge = await problems(`{"id":"x","description":"${'x'.repeat(1_100_000)}"}`);
  assert.match(huge[0], /bytes is over the 1048576-byte limit of a task file/);
});

test('a data file over the cell limit is refused with one line naming the field, before it is parsed', async () => {
  // 10,001 rows of 1,000 columns: 20 MB, over the limit of cells though under those of rows, columns and bytes.
  const header = [...Array.from({ length: 999 }, (_, j) => `x${j}`), 'kind'].join(',');
  writeFileSync(join(dir, 'cells.csv'), `${header}\n${`${'0,'.repeat(999)}up\n`.repeat(10_001)}`);
  const p = await problems(classificationTask('cells', { data: data({ file: 'cells.csv', features: ['x0', 'x1'] }), variables: {} }));
  assert.deepEqual(p, [
    `data.file: cells.csv: 10001 rows × 1000 columns = 10001000 cells is over the limit of ${MAX_CELLS} cells; keep only the columns the task uses, or fewer rows`,
  ]);
  const extra = await problems(classificationTask('cells2', { data: data({ sources: [{ id: 'crowd', file: 'cells.csv', description: 'wide' }] }) }));
  assert.match(extra[0], /^data\.sources\[0\]\.file: cells\.csv: 10001 rows × 1000 columns/);
});

test('wrong and missing columns, a missing target, non-numeric features, a target that is not a number', async () => {
  const wrong = await problems(classificationTask('w1', { data: data({ features: ['a', 'speed', 'c'] }), variables: {} }));
  assert.match(wrong[0], /^data\.features\[1\]: column "speed" is not in data\.csv \(columns: a, b, c, kind, y\)/);
  assert.match(
    (await problems(classificationTask('w2', { data: data({ target: 'label' }), variables: {} })))[0],
    /^data\.target: column "label" is not in data\.csv/,
  );
  // A column of texts is a categorical feature, kept and said so.
  const w3 = classificationTask('w3', { data: data({ features: ['a', 'kind'], target: 'y', type: 'regression' }), metric: 'rmse', variables: {} });
  const text = await loadTaskFile(writeTask(dir, 'w3.json', w3), dir);
  assert.ok(
    text.notes.some((n) => /column "kind" read as categorical \(2 levels\)/.test(n)),
    text.notes.join(' | '),
  );
  assert.match(
    (await problems(classificationTask('w4', { data: data({ target: 'kind', type: 'regression' }), metric: 'rmse' })))[0],
    /^data\.target: column "kind" is not numeric \(row 1: "up"\); use type "classification"/,
  );
  assert.match((await problems(classificationTask('w5', { data: data({ type: 'regression' }) })))[0], /^metric: "accuracy" needs a classification target/);
  assert.match((await problems(classificationTask('w6', { variables: { speed: 'how fast' } })))[0], /^variables\.speed: not the target or a feature/);
});

test('a target that leaks into the features: the column itself, a copy, a change of units, a code of the class', async () => {
  assert.match(
    (await problems(classificationTask('l1', { data: data({ features: ['a', 'kind'] }) })))[0],
    /^data\.features\[1\]: the target column "kind" is also a feature/,
  );
  const rows = syntheticRows(200).map((r, i) => ({
    ...r,
    y_copy: r.y,
    y_km: r.y * 0.425144,
    kind_code: r.kind === 'up' ? 7 : 3,
    noisy: r.y + 0.5 * Math.sin(i * 2.1),
  }));
  writeFileSync(join(dir, 'leaky.csv'), toCsv(rows));
  const reg = { data: { file: 'leaky.csv', target: 'y', type: 'regression', features: ['a', 'y_copy', 'y_km', 'noisy'] }, metric: 'rmse', variables: {} };
  const leaks = await problems(classificationTask('l2', reg));
  assert.equal(leaks.length, 2, leaks.join(' | '));
  assert.match(leaks[0], /^data\.features\[1\]: column "y_copy" is a copy of the target \(correlation 1\.0000 with "y"\)/);
  assert.match(leaks[1], /^data\.features\[2\]: column "y_km" is a copy of the target/);
  const code = await problems(
    classificationTask('l3', { data: { file: 'leaky.csv', target: 'kind', type: 'classification', features: ['a', 'b', 'kind_code'] }, variables: {} }),
  );
  assert.deepEqual(code.length, 1);
  assert.match(code[0], /^data\.features\[2\]: column "kind_code" decides the target "kind" on every row \(2 values, each with one class\)/);
  // A strong but honest feature is no leak: "a" nearly decides the class, yet takes a value per row.
  await loadTaskFile(
    writeTask(
      dir,
      'honest.json',
      classificationTask('honest', { data: { file: 'leaky.csv', target: 'kind', type: 'classification', features: ['a', 'noisy'] }, variables: {} }),
    ),
    dir,
  );
});

test('empty data: no rows, only empty values, too few rows, a single class, a constant target', async () => {
  writeFileSync(join(dir, 'header.csv'), 'a,b,c,kind\n');
  assert.match(
    (await problems(classificationTask('e1', { data: data({ file: 'header.csv' }) })))[0],
    /^data\.file: header\.csv has no usable rows \(0 rows, 0 with an empty value\)/,
  );
  writeFileSync(join(dir, 'blank.csv'), 'a,b,c,kind\n,,,\nNA,1,2,up\n');
  assert.match(
    (await problems(classificationTask('e2', { data: data({ file: 'blank.csv' }) })))[0],
    /^data\.features\[0\]: column "a" has no value in any row; leave it out/,
  );
  writeFileSync(join(dir, 'few.csv'), toCsv(syntheticRows(12)));
  assert.match(
    (await problems(classificationTask('e3', { data: data({ file: 'few.csv' }) })))[0],
    /^data\.file: few\.csv has 12 usable rows; a task needs at least 20/,
  );
  writeFileSync(join(dir, 'one.csv'), toCsv(syntheticRows(40).map((r) => ({ ...r, kind: 'up' }))));
  assert.match((await problems(classificationTask('e4', { data: data({ file: 'one.csv' }) })))[0], /^data\.target: column "kind" has a single class \("up"\)/);
  writeFileSync(join(dir, 'const.csv'), toCsv(syntheticRows(40).map((r) => ({ ...r, y: 5 }))));
  assert.match(
    (
      await problems(classificationTask('e6', { data: { file: 'const.csv', target: 'y', type: 'regression', features: ['a'] }, metric: 'mae', variables: {} }))
    )[0],
    /^data\.target: column "y" has the same value on every row/,
  );
  writeFileSync(join(dir, 'missing.csv'), toCsv(syntheticRows(40).map((r, i) => ({ ...r, a: i === 3 ? '' : r.a }))));
  assert.match(
    (await problems(classificationTask('e7', { data: data({ file: 'missing.csv', missing: 'error' }) })))[0],
    /^data\.missing: 1 row\(s\) of missing\.csv have an empty value \(first: row 4, column "a"\)/,
  );
});

test('ids that clash with a built-in task; schema errors name their field; not JSON; a Gymnasium task without the bridge', async () => {
  assert.deepEqual(await problems(classificationTask('cars-mpg')), ['id: "cars-mpg" clashes with a built-in task; choose another id']);
  const schema = await problems(classificationTask('Bad_Id', { metric: 'auc', caps: { maxWallSeconds: -1 } }));
  assert.ok(
    schema.some((p) => /^id: lowercase words joined by hyphens/.test(p)),
    schema.join(' | '),
  );
  assert.ok(schema.some((p) => /^metric: /.test(p)));
  assert.ok(schema.some((p) => /^caps\.maxWallSeconds: /.test(p)));
  assert.match((await problems('{ "id": "x", '))[0], /^not valid JSON/);
  const gym = await problems({
    id: 'my-cartpole',
    title: 'Balance a pole',
    description: 'Balance the pole on the cart.',
    kind: 'control',
    environment: { gymnasium: 'CartPole-v1' },
  });
  assert.deepEqual(gym, ['environment.gymnasium: gymnasium tasks need the Gymnasium bridge']);
});

test('extra sources: their own columns are checked, and a label unknown to the main file is refused', async () => {
  writeFileSync(join(dir, 'crowd.csv'), toCsv(syntheticRows(30, 500).map((r, i) => ({ ...r, kind: i === 4 ? 'sideways' : r.kind }))));
  const p = await problems(classificationTask('s1', { data: data({ sources: [{ id: 'crowd', file: 'crowd.csv', description: 'crowd labels' }] }) }));
  assert.match(p[0], /^data\.sources\[0\]: label "sideways" of crowd\.csv is not a class of data\.csv \(classes: down, up\)/);
  writeFileSync(join(dir, 'narrow.csv'), 'a,b,kind\n1,2,up\n');
  assert.match(
    (await problems(classificationTask('s2', { data: data({ sources: [{ id: 'crowd', file: 'narrow.csv', description: 'crowd labels' }] }) })))[0],
    /^data\.sources\[0\]\.features\[2\]: column "c" is not in narrow\.csv/,
  );
  assert.match(
    (await problems(classificationTask('s3', { data: data({ sources: [{ id: 'main', file: 'data.csv', description: 'again' }] }) })))[0],
    /^data\.sources: the source id "main" is used twice/,
  );
});

test('rrl task validate prints one line per problem and exits 1; a good file prints ok', () => {
  const bad = writeTask(dir, 'cli-bad.json', classificationTask('cli-bad', { data: data({ features: ['a', 'kind', 'b', 'a'] }), variables: {} }));
  const good = writeTask(dir, 'cli-good.json', classificationTask('cli-good'));
  const cli = new URL('../../cli/index.js', import.meta.url).pathname;
  let out = '';
  try {
    execFileSync(process.execPath, [cli, 'task', 'validate', good, bad], { encoding: 'utf8', stdio: 'pipe' });
    assert.fail('validate accepted a bad file');
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    assert.equal(e.status, 1);
    out = e.stdout;
    const lines = e.stderr.trim().split('\n');
    assert.equal(lines.length, 2, e.stderr);
    assert.match(lines[0], /cli-bad\.json: data\.features\[1\]: the target column "kind" is also a feature/);
    assert.match(lines[1], /cli-bad\.json: data\.features: column "a" is listed twice/);
    assert.doesNotMatch(e.stderr, /\n\s+at /, 'no stack trace');
  }
  assert.match(out, /^ok .*cli-good\.json: task cli-good/);
  // A source that repeats the main file: validate counts its near-copies and the rule.
  const copy = writeTask(
    dir,
    'cli-copy.json',
    classificationTask('cli-copy', { data: data({ sources: [{ id: 'again', file: 'data.csv', description: 'the same file' }] }) }),
  );
  const said = execFileSync(process.execPath, [cli, 'task', 'validate', copy], { encoding: 'utf8', stdio: 'pipe' });
  assert.match(
    said,
    /\n {2}200 of 200 rows of data\.csv are near-copies of rows of data\.csv \(within [0-9.e-]+ std of a main row in every feature[^)]*\); those of hidden test rows \(about 30 %\) are dropped from source again\n/,
  );
});

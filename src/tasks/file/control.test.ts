import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runJob } from '../../inner/train.js';
import { scoreArtifact } from '../../outer/scoring/hidden-score.js';
import { getPublicTask } from '../briefs.js';
import { TaskFileError, loadTaskFile } from './load.js';
import { registerTaskDir } from './register.js';
import { skipWithoutPython } from '../../testing/python.js';

const tmp = mkdtempSync(join(tmpdir(), 'rrl-control-file-'));
const skip = skipWithoutPython('the Gymnasium task-file tests that load through the bridge');
const cartpole = (id: string, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  title: 'Balance a pole on a cart',
  description: 'Push the cart left or right so that the pole stays upright for as long as possible.',
  kind: 'control',
  variables: { x: 'cart position (m)', v: 'cart velocity (m/s)', theta: 'pole angle (rad)', omega: 'pole angular velocity (rad/s)' },
  environment: { gymnasium: 'CartPole-v1' },
  caps: { maxEnvSteps: 20_000, maxWallSeconds: 120 },
  ...over,
});

test('a Gymnasium task file loads through the bridge, trains through it and is scored on held-out episodes', { skip }, async () => {
  const dir = join(tmp, 'ok');
  mkdirSync(dir);
  writeFileSync(join(dir, 'my-cartpole.json'), JSON.stringify(cartpole('my-cartpole')));
  await registerTaskDir(dir);
  const { brief, baseline } = getPublicTask('my-cartpole');
  assert.equal(brief.kind, 'control');
  assert.equal(brief.environment?.gymnasium?.id, 'CartPole-v1');
  assert.deepEqual(
    brief.environment?.observation.map((v) => v.name),
    ['x', 'v', 'theta', 'omega'],
  );
  assert.equal(brief.environment?.gymnasium?.maxEpisodeSteps, 500); // from the environment's own time limit
  assert.equal(baseline.budget?.envSteps, 10_000); // half the cap
  const a = await runJob({ ...baseline, budget: { envSteps: 4096 } }, brief, { outDir: join(tmp, 'job') });
  assert.equal(a.cost.envSteps, 4096);
  const s = scoreArtifact('my-cartpole', a.dir);
  assert.ok(Number.isFinite(s.raw) && s.raw >= 8 && s.raw <= 500, `hidden mean return ${s.raw}`);
});

test('a Gymnasium task file with an unknown id or misnamed variables gets one line naming the field', { skip }, async () => {
  const dir = join(tmp, 'bad');
  mkdirSync(dir);
  const problems = async (task: Record<string, unknown>): Promise<string[]> => {
    writeFileSync(join(dir, `${task.id as string}.json`), JSON.stringify(task));
    try {
      await loadTaskFile(join(dir, `${task.id as string}.json`), dir);
    } catch (err) {
      assert.ok(err instanceof TaskFileError, String(err));
      return err.problems;
    }
    return assert.fail('the task file loaded');
  };
  const unknown = await problems(cartpole('no-such', { environment: { gymnasium: 'NoSuchEnvironment-v0' } }));
  assert.equal(unknown.length, 1);
  assert.match(unknown[0], /^environment\.gymnasium: .*NoSuchEnvironment-v0/);
  assert.ok(!unknown[0].includes('\n'));
  const three = await problems(cartpole('three-vars', { variables: { x: 'a', v: 'b', theta: 'c' } }));
  assert.deepEqual(three, ['variables: 3 given for 4 observation values; name every value, in order, or none']);
});

const cli = new URL('../../cli/index.js', import.meta.url).pathname;
const testsDir = resolve(fileURLToPath(import.meta.url), '../../../../../python/tests');

/** `rrl task validate FILE` in a real process: its exit status and output. */
function validate(file: string, env: NodeJS.ProcessEnv): { status: number; stdout: string; stderr: string } {
  try {
    return { status: 0, stdout: execFileSync(process.execPath, [cli, 'task', 'validate', file], { encoding: 'utf8', stdio: 'pipe', env }), stderr: '' };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { status: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

test('`rrl task validate` refuses a Gymnasium id that names a module to import in one line, and starts no Python', () => {
  const dir = join(tmp, 'import-refused');
  mkdirSync(dir);
  const marker = join(dir, 'python-ran');
  const python = join(dir, 'recording-python');
  writeFileSync(python, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
  chmodSync(python, 0o755);
  const file = join(dir, 'imports.json');
  writeFileSync(file, JSON.stringify(cartpole('imports', { environment: { gymnasium: 'mypkg.envs:MyEnv-v0' } })));
  const r = validate(file, { ...process.env, RRL_PYTHON: python });
  assert.equal(r.status, 1);
  assert.equal(
    r.stderr,
    `${file}: environment.gymnasium: "mypkg.envs:MyEnv-v0" names a module to import (mypkg.envs); set environment.allowImport to true to allow it\n`,
  );
  assert.ok(!existsSync(marker), 'validating the file started no Python');
  writeFileSync(file, JSON.stringify(cartpole('imports', { environment: { gymnasium: 'mypkg.envs:MyEnv-v0', allowImport: 'yes' } })));
  assert.match(validate(file, { ...process.env, RRL_PYTHON: python }).stderr, /^[^\n]*: environment\.allowImport: .*boolean.*\n$/);
  assert.ok(!existsSync(marker));
});

test('with "allowImport": true the bridge imports the module the id names (and only then)', { skip }, () => {
  const dir = join(tmp, 'import-allowed');
  mkdirSync(dir);
  const marker = join(dir, 'imported');
  const env = { ...process.env, PYTHONPATH: testsDir, RRL_IMPORT_MARKER: marker };
  const file = join(dir, 'imports.json');
  writeFileSync(file, JSON.stringify(cartpole('imports', { environment: { gymnasium: 'gym_import_marker:RrlMarked-v0', allowImport: true } })));
  const r = validate(file, env);
  assert.equal(r.status, 1);
  assert.match(
    r.stderr,
    /^[^\n]*imports\.json: environment\.gymnasium: gymnasium bridge \(gym_import_marker:RrlMarked-v0\): cannot make Gymnasium environment .*RrlMarked.*\n$/,
  );
  assert.equal(readFileSync(marker, 'utf8'), 'imported\n', 'the bridge imported gym_import_marker');
});

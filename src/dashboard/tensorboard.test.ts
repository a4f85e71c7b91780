/**
 * `rrl export tensorboard`: the event files are read back by TensorBoard's own reader
 * (EventAccumulator, in the repository's Python virtual environment), and every scalar matches
 * the store. Without .venv or TensorBoard the reading test says so loudly and skips; with
 * RRL_REQUIRE_PYTHON=1 (CI) it fails instead.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeLargeRun } from '../testing/large-run.js';
import { Store } from '../store/store.js';
import { crc32c, exportTensorboard } from './tensorboard.js';

const root = resolve(fileURLToPath(import.meta.url), '../../../..');
const python = join(root, '.venv', 'bin', 'python');
const why = !existsSync(python)
  ? `no Python virtual environment at ${python} (run python/setup-venv.sh)`
  : spawnSync(python, ['-c', 'import tensorboard'], { encoding: 'utf8' }).status !== 0
    ? `TensorBoard is not installed in ${python} (python/requirements.txt pins it; rerun python/setup-venv.sh)`
    : null;
if (why) {
  process.stderr.write(`\n${'!'.repeat(78)}\n!! TENSORBOARD READ-BACK SKIPPED: ${why}\n${'!'.repeat(78)}\n`);
  if (process.env.RRL_REQUIRE_PYTHON === '1') throw new Error(`RRL_REQUIRE_PYTHON=1 but ${why}`);
}

// TensorBoard's reader, as `tensorboard --logdir` uses it: every scalar of each directory given.
const READER = `
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
out = {}
for d in sys.argv[1:]:
    acc = EventAccumulator(d, size_guidance={"scalars": 0})
    acc.Reload()
    out[d] = {t: [[e.step, e.value] for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}
print(json.dumps(out))
`;

type Scalars = Record<string, Record<string, [number, number][]>>;
function readBack(dirs: string[]): Scalars {
  const r = spawnSync(python, ['-c', READER, ...dirs], { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Scalars;
}
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));

test('CRC-32C matches the standard check value', () => {
  assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(0)), 0);
});

test('TensorBoard reads back every scalar: per iteration, per task, per job', { skip: why ?? false }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-tb-'));
  const runDir = join(tmp, 'run');
  writeLargeRun(runDir, { iterations: 3, group: 3, curvePoints: 20 });
  const out = join(tmp, 'tb');
  const r = exportTensorboard(runDir, out);
  const store = new Store(runDir);
  const run = store.getRun()!;
  const iterations = store.iterations(run.id);
  const jobs = store.jobs(run.id);
  store.close();

  const jobDirs = readdirSync(join(out, 'jobs')).sort();
  assert.equal(jobDirs.length, jobs.length, 'one TensorBoard run per finished job');
  assert.deepEqual(readdirSync(join(out, 'tasks')).sort(), ['cartpole-short', 'iris-species']);
  const dirs = [join(out, 'run'), join(out, 'tasks', 'cartpole-short'), ...jobDirs.map((d) => join(out, 'jobs', d))];
  const got = readBack(dirs);

  const perIteration = got[join(out, 'run')];
  assert.deepEqual(
    perIteration['outer/reward'].map(([s]) => s),
    [1, 2, 3],
  );
  for (const [i, it] of iterations.entries()) {
    assert.ok(close(perIteration['outer/reward'][i][1], it.meanReward!), `reward of iteration ${i + 1}`);
    assert.ok(close(perIteration['outer/score_normalized'][i][1], it.meanNormalized!));
    assert.ok(close(perIteration['outer/score_normalized_best'][i][1], it.bestNormalized!));
  }
  assert.deepEqual(
    perIteration['agent/entropy'].map(([, v]) => v),
    [20, 20 - 10 / 3, 20 - 20 / 3].map((v) => Math.fround(v)),
  );
  for (const tag of ['outer/invalid_share', 'outer/failed_share', 'compute/env_steps', 'compute/cpu_seconds']) assert.equal(perIteration[tag].length, 3, tag);

  const task = got[join(out, 'tasks', 'cartpole-short')];
  const taskJobs = jobs.filter((j) => j.task === 'cartpole-short' && j.kind === 'proposal' && j.round === 0 && j.normalized !== null);
  assert.ok(close(task['outer/score_normalized_best'][0][1], Math.max(...taskJobs.map((j) => j.normalized!))));
  assert.deepEqual(
    task['baseline/score_normalized'].map(([, v]) => v),
    [0.4, 0.4, 0.4].map((v) => Math.fround(v)),
  );

  let curves = 0;
  for (const j of jobs) {
    const s = got[join(out, 'jobs', `j${String(j.id).padStart(5, '0')}`)];
    if (j.normalized === null) assert.equal(s['job/score_normalized'], undefined, `job ${j.id} has no score`);
    else assert.ok(close(s['job/score_normalized'][0][1], j.normalized), `job ${j.id}`);
    if (j.reward !== null) assert.ok(close(s['job/reward'][0][1], j.reward));
    if (s['charts/episodic_return']) {
      assert.deepEqual(
        s['charts/episodic_return'].map(([step]) => step),
        Array.from({ length: 20 }, (_, k) => (k + 1) * 100),
      );
      curves += 1;
    }
  }
  assert.ok(curves > 0);
  assert.ok(r.scalars > 0 && r.files === 1 + 2 + jobs.length);

  // The framing's checksums are checked by the reader: a flipped byte ends the file there.
  const file = join(out, 'run', readdirSync(join(out, 'run'))[0]);
  const bytes = readFileSync(file);
  bytes[Math.floor(bytes.length / 2)] ^= 0xff;
  writeFileSync(file, bytes);
  const damaged = readBack([join(out, 'run')])[join(out, 'run')];
  const count = (s: Record<string, unknown[]>): number => Object.values(s).reduce((a, v) => a + v.length, 0);
  assert.ok(count(damaged) < count(perIteration), 'a damaged record is not read');
});

test('exporting a directory without a run names it', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-tb-none-'));
  assert.throws(() => exportTensorboard(tmp, join(tmp, 'out')), /no run in .*store\.db not found/);
});

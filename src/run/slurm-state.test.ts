import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAPPED_STATES, finalOutcome, isLive, normalizeState } from './slurm-state.js';
import { compareVersions, negotiateVersion } from './slurm-rest.js';
import { batchScript, slurmJobEnvironment } from './slurm.js';

test('Slurm states as the tools print them are normalised', () => {
  assert.equal(normalizeState('CANCELLED by 0'), 'CANCELLED');
  assert.equal(normalizeState('out_of_memory'), 'OUT_OF_MEMORY');
  assert.equal(normalizeState(['FAILED', 'REQUEUED']), 'FAILED');
  assert.equal(normalizeState(' RUNNING\n'), 'RUNNING');
});

test('every state the issue names maps to a result with a reason; lost nodes and preemption resubmit', () => {
  for (const s of ['COMPLETED', 'FAILED', 'TIMEOUT', 'OUT_OF_MEMORY', 'CANCELLED', 'NODE_FAIL', 'PREEMPTED']) assert.ok(MAPPED_STATES.includes(s), s);
  assert.equal(finalOutcome('COMPLETED').completed, true);
  assert.equal(finalOutcome('TIMEOUT').kind, 'timeout');
  assert.equal(finalOutcome('OUT_OF_MEMORY').kind, 'out-of-memory');
  assert.equal(finalOutcome('CANCELLED by 0').kind, 'cancelled');
  assert.equal(finalOutcome('FAILED').resubmit, false);
  assert.equal(finalOutcome('NODE_FAIL').resubmit, true);
  assert.equal(finalOutcome('PREEMPTED').resubmit, true);
  assert.match(finalOutcome('WEIRD').reason, /unexpected Slurm state "WEIRD"/);
  assert.ok(isLive('PENDING') && isLive('RUNNING') && isLive('COMPLETING'));
  assert.ok(!isLive('COMPLETED') && !isLive('NODE_FAIL'));
});

test('the REST API version is negotiated from what the daemon offers', () => {
  const paths = (v: string) => [`/slurm/${v}/job/submit`, `/slurm/${v}/jobs`, `/slurm/${v}/job/{job_id}`];
  assert.equal(negotiateVersion([...paths('v0.0.36'), ...paths('v0.0.38'), ...paths('v0.0.37')]), 'v0.0.38');
  assert.equal(
    negotiateVersion([...paths('v0.0.40'), '/slurm/v0.0.41/job/submit', '/slurmdb/v0.0.41/jobs']),
    'v0.0.40',
    'a version without the job endpoints is not used',
  );
  assert.throws(() => negotiateVersion(['/slurmdb/v0.0.38/jobs']), /no Slurm API with job submit.*versions seen: none/);
  assert.ok(compareVersions('v0.0.39', 'v0.0.100') < 0);
});

test('the batch script runs `rrl job exec` with quoted absolute paths and never the scoring command', () => {
  const s = batchScript({
    name: 'rrl-x-j00001',
    node: '/usr/bin/node',
    project: "/opt/it's rrl",
    dir: '/shared/run/jobs/j00001',
    spec: '/shared/s.json',
    brief: '/shared/b.json',
    data: '/shared/d.json',
    memoryMb: 1000,
  });
  assert.match(s, /^#!\/bin\/bash\n/);
  assert.match(
    s,
    /exec '\/usr\/bin\/node' --max-old-space-size=850 '\/opt\/it'\\''s rrl\/bin\/rrl\.js' job exec --spec '\/shared\/s\.json' --brief '\/shared\/b\.json' --data '\/shared\/d\.json' --out '\/shared\/run\/jobs\/j00001'/,
  );
  assert.doesNotMatch(s, /job run/);
});

const home = join(mkdtempSync(join(tmpdir(), 'rrl-slurm-env-')), 'slurm', 'home');

test('jobs never receive the evaluation secret or tokens from the harness environment', () => {
  process.env.RRL_EVAL_SECRET = '12345';
  process.env.SLURM_JWT = 'abc';
  process.env.SLURM_JOB_ID = '77';
  try {
    const env = slurmJobEnvironment(home);
    assert.equal(env.RRL_EVAL_SECRET, undefined);
    assert.equal(env.SLURM_JWT, undefined);
    assert.equal(env.SLURM_JOB_ID, undefined, "the harness's own Slurm job is not the batch job's");
    assert.ok(env.PATH);
  } finally {
    delete process.env.RRL_EVAL_SECRET;
    delete process.env.SLURM_JWT;
    delete process.env.SLURM_JOB_ID;
  }
});

test('Slurm jobs never receive API keys, tokens, secrets or passwords', () => {
  const names = ['OPENAI_API_KEY', 'HF_TOKEN', 'WANDB_API_KEY', 'MY_SERVICE_SECRET', 'PGPASSWORD'];
  for (const n of names) process.env[n] = 'do-not-leak';
  process.env.RRL_HARMLESS_SETTING = 'visible';
  try {
    const env = slurmJobEnvironment(home);
    for (const n of names) assert.equal(env[n], undefined, n);
    assert.equal(env.RRL_HARMLESS_SETTING, 'visible');
  } finally {
    for (const n of names) delete process.env[n];
    delete process.env.RRL_HARMLESS_SETTING;
  }
});

test("Slurm jobs get a HOME and XDG directories of their own (made 0700), never the user's, and no secret file path", () => {
  const saved = { file: process.env.RRL_EVAL_SECRET_FILE, config: process.env.XDG_CONFIG_HOME };
  process.env.RRL_EVAL_SECRET_FILE = '/somewhere/eval-secret';
  process.env.XDG_CONFIG_HOME = '/user/config';
  try {
    const env = slurmJobEnvironment(home);
    assert.equal(env.HOME, home);
    assert.equal(env.XDG_CONFIG_HOME, join(home, '.config'));
    assert.equal(env.XDG_CACHE_HOME, join(home, '.cache'));
    assert.equal(env.XDG_DATA_HOME, join(home, '.local', 'share'));
    assert.equal(env.RRL_EVAL_SECRET_FILE, undefined);
    for (const d of [env.HOME, env.XDG_CONFIG_HOME, env.XDG_CACHE_HOME]) assert.equal(statSync(d).mode & 0o777, 0o700, d);
  } finally {
    for (const [name, value] of [
      ['RRL_EVAL_SECRET_FILE', saved.file],
      ['XDG_CONFIG_HOME', saved.config],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

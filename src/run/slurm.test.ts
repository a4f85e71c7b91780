/**
 * The Slurm executor against a real single-node cluster started by the test (munged,
 * slurmctld, slurmd and slurmrestd from Debian's packages). Where Slurm is not installed the
 * tests say so loudly and skip; with RRL_REQUIRE_SLURM=1 (CI) they fail instead.
 */
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { type SlurmCluster, clusterUnavailable, findBinary, startCluster } from '../testing/slurm-cluster.js';
import { runJobPrefix } from './slurm.js';
import { BASELINE_SEEDS, CONFIRM_SEEDS } from '../outer/noise.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const why = clusterUnavailable();
if (why) {
  const banner = `\n${'!'.repeat(78)}\n!! SLURM CLUSTER TESTS SKIPPED: ${why}\n${'!'.repeat(78)}\n`;
  process.stderr.write(banner);
  if (process.env.RRL_REQUIRE_SLURM === '1') throw new Error(`RRL_REQUIRE_SLURM=1 but ${why}`);
}
const skip = why ?? false;
const rest = !why && findBinary('slurmrestd') !== null;
let cluster: SlurmCluster;

before(async () => {
  if (!why) cluster = await startCluster({ rest });
});
after(async () => {
  await cluster?.stop();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The CLI with the cluster's configuration; a short poll interval keeps the tests quick. */
function rrlTrain(runDir: string, extra: string[]): ChildProcess {
  return spawn(
    process.execPath,
    [
      bin,
      'train',
      '--executor',
      'slurm',
      '--poll-interval',
      '300',
      '--tasks',
      'iris-command',
      '--agent',
      'random',
      '--iterations',
      '1',
      '--group',
      '2',
      '--seed',
      '3',
      '--run',
      runDir,
      '--json',
      ...extra,
    ],
    { env: { ...process.env, ...cluster.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/** Waits for a child to exit; returns its exit code, stdout and stderr. */
async function finished(child: ChildProcess, limitMs = 180_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (b: Buffer) => (stdout += b));
  child.stderr?.on('data', (b: Buffer) => (stderr += b));
  // A run that never ends (a broken cluster) is killed, so the test fails instead of hanging the suite.
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** The run's jobs in the cluster's queue: id → state. */
function queue(runDir: string): Map<string, string> {
  const prefix = runJobPrefix(runDir);
  const out = cluster.run('squeue', ['-h', '-o', '%i|%T|%j']);
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('|'))
      .filter(([, , name]) => name.startsWith(prefix))
      .map(([id, state]) => [id, state]),
  );
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

function jobRows(runDir: string): { id: number; kind: string; status: string; failure_kind: string | null; error: string | null; raw: number | null }[] {
  const db = new Database(join(runDir, 'store.db'), { readonly: true });
  try {
    return db
      .prepare('SELECT j.id, j.kind, j.status, j.failure_kind, j.error, s.raw FROM jobs j LEFT JOIN scores s ON s.job_id = j.id ORDER BY j.id')
      .all() as never;
  } finally {
    db.close();
  }
}

/** A one-iteration run of two proposals: the baseline on each harness seed (a failed seed retried), the two proposals, and a confirmation's seeds for a bonus candidate. */
function assertRunJobs(rows: { kind: string; status: string }[]): void {
  const count = (kind: string): number => rows.filter((r) => r.kind === kind).length;
  assert.equal(count('proposal'), 2, 'two proposals');
  assert.ok(count('baseline') >= BASELINE_SEEDS, `the baseline on its ${BASELINE_SEEDS} harness seeds`);
  assert.equal(count('confirm') % CONFIRM_SEEDS, 0, 'a confirmation trains on every seed');
  assert.equal(rows.length, count('proposal') + count('baseline') + count('confirm'));
}

/** Slurm job ids recorded in each job directory (attempt by attempt). */
function recordedIds(runDir: string): Map<string, string[]> {
  const jobs = join(runDir, 'jobs');
  const out = new Map<string, string[]>();
  for (const d of existsSync(jobs) ? readdirSync(jobs) : []) {
    const f = join(jobs, d, 'slurm', 'job.json');
    if (existsSync(f))
      out.set(
        d,
        (JSON.parse(readFileSync(f, 'utf8')) as { attempts: { jobId: string }[] }).attempts.map((a) => a.jobId),
      );
  }
  return out;
}

test('rrl train --executor slurm runs an RL run to completion on the cluster and scores on the harness side', { skip }, async () => {
  const runDir = join(cluster.dir, 'run-rl');
  const child = spawn(
    process.execPath,
    [
      bin,
      'train',
      '--executor',
      'slurm',
      '--poll-interval',
      '300',
      '--tasks',
      'cartpole-short',
      '--agent',
      'random',
      '--iterations',
      '1',
      '--group',
      '2',
      '--run',
      runDir,
      '--json',
    ],
    { env: { ...process.env, ...cluster.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const r = await finished(child);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  assert.equal(summary.jobs, 2);
  const rows = jobRows(runDir);
  assertRunJobs(rows);
  for (const row of rows) {
    assert.ok(['succeeded', 'invalid', 'failed'].includes(row.status), `job ${row.id}: ${row.status}`);
    if (row.status === 'succeeded') assert.equal(typeof row.raw, 'number', 'scored by the harness');
  }
  assert.ok(rows.some((row) => row.status === 'succeeded'));
  // Every valid job ran as a batch job: its directory names the Slurm job, its script runs `rrl job exec`.
  const ids = recordedIds(runDir);
  assert.ok(ids.size >= 1);
  for (const [d] of ids) {
    const script = readFileSync(join(runDir, 'jobs', d, 'slurm', 'job.sh'), 'utf8');
    assert.match(script, /rrl\.js' job exec --spec/);
    assert.doesNotMatch(script, /job run/, 'the node never runs the scoring `rrl job run`');
  }
  assert.equal(queue(runDir).size, 0, 'nothing left in the queue');
});

test('the command trainer runs on the cluster; its hidden evaluation command scores on the harness side', { skip }, async () => {
  const runDir = join(cluster.dir, 'run-command');
  const r = await finished(rrlTrain(runDir, []));
  assert.equal(r.code, 0, r.stderr);
  const rows = jobRows(runDir);
  assertRunJobs(rows);
  const ok = rows.filter((row) => row.status === 'succeeded');
  assert.ok(ok.length >= 1, JSON.stringify(rows));
  for (const row of ok) assert.ok(row.raw! >= 0 && row.raw! <= 1, 'accuracy from the evaluation command');
  const dirs = readdirSync(join(runDir, 'jobs'));
  assert.ok(
    dirs.some((d) => existsSync(join(runDir, 'jobs', d, 'weights.json'))),
    'the trainer wrote weights in its own format',
  );
});

test('slurmd killed mid-job: the job ends NODE_FAIL, is submitted again, and the run finishes', { skip }, async () => {
  const runDir = join(cluster.dir, 'run-nodefail');
  // A slow first job (long sleeps in the trainer) so it is surely running when slurmd dies.
  const child = spawn(
    process.execPath,
    [
      bin,
      'train',
      '--executor',
      'slurm',
      '--poll-interval',
      '300',
      '--tasks',
      'iris-command',
      '--agent',
      'baseline',
      '--iterations',
      '1',
      '--group',
      '1',
      '--run',
      runDir,
      '--json',
      '--max-resubmits',
      '2',
    ],
    { env: { ...process.env, ...cluster.env, RRL_EXAMPLE_TRAINER_DELAY_MS: '4000' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const done = finished(child);
  const running = await until('a running job', () => [...queue(runDir)].find(([, s]) => s === 'RUNNING')?.[0]);
  await cluster.killSlurmd();
  try {
    // The controller notices a dead slurmd after SlurmdTimeout; an operator (here the test) marks it down at once.
    cluster.run('scontrol', ['update', `nodename=${cluster.node}`, 'state=down', 'reason=rrl-test-node-failure']);
    await until('NODE_FAIL', () => {
      const ids = recordedIds(runDir);
      return [...ids.values()].some((a) => a.length >= 2 && a[0] === running);
    });
  } finally {
    // Whatever happened above, the node comes back for the tests after this one.
    await cluster.restartSlurmd();
  }
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  const rows = jobRows(runDir);
  assert.ok(rows.every((row) => row.status !== 'pending'));
  const attempts = [...recordedIds(runDir).values()].find((a) => a[0] === running)!;
  assert.ok(attempts.length >= 2, 'submitted again after NODE_FAIL');
  const first = JSON.parse(readFileSync(join(runDir, 'jobs', [...recordedIds(runDir)].find(([, a]) => a[0] === running)![0], 'slurm', 'job.json'), 'utf8'));
  assert.equal(first.attempts[0].state, 'NODE_FAIL');
  assert.ok(
    rows.some((row) => row.status === 'succeeded'),
    JSON.stringify(rows),
  );
  await cluster.waitReady();
});

test('interrupting a run cancels its jobs: none is left in the queue', { skip }, async () => {
  const runDir = join(cluster.dir, 'run-cancel');
  const child = rrlTrain(runDir, ['--slurm-arg=--hold']);
  const done = finished(child);
  await until('three held jobs', () => queue(runDir).size >= 3);
  child.kill('SIGINT');
  const r = await done;
  assert.equal(r.code, 130, r.stderr);
  assert.match(r.stderr, /interrupted/);
  await until('an empty queue', () => queue(runDir).size === 0, 20_000);
  const rows = jobRows(runDir);
  assert.ok(
    rows.some((row) => row.status === 'pending'),
    'cancelled jobs stay pending for resume',
  );
});

test('resuming a run whose jobs are still queued reattaches to them instead of submitting again', { skip }, async () => {
  const runDir = join(cluster.dir, 'run-resume');
  const child = rrlTrain(runDir, ['--slurm-arg=--hold']);
  const exited = finished(child);
  // Every job of the iteration (the baseline's seeds and the proposals, all stored before any is
  // submitted) held in the queue with its id recorded: killed any earlier, the harness could still be
  // submitting, and the queue after the kill would hold jobs the snapshot does not.
  const held = await until('every job of the run held', () => {
    let rows = 0;
    try {
      rows = jobRows(runDir).length;
    } catch {} // the store is not created yet
    const q = queue(runDir);
    return rows >= 3 && q.size === rows && [...recordedIds(runDir).values()].flat().length === rows ? q : undefined;
  });
  child.kill('SIGKILL');
  await exited;
  const before = recordedIds(runDir);
  assert.deepEqual([...queue(runDir).keys()].sort(), [...held.keys()].sort(), 'the held jobs outlive the harness');

  const resumed = spawn(process.execPath, [bin, 'train', '--resume', runDir, '--json'], {
    env: { ...process.env, ...cluster.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const done = finished(resumed);
  await sleep(2000); // the resumed harness polls the held jobs
  assert.deepEqual([...queue(runDir).keys()].sort(), [...held.keys()].sort(), 'no job was submitted again');
  execFileSync(findBinary('scontrol')!, ['release', [...held.keys()].join(',')], { env: { ...process.env, ...cluster.env } });
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(recordedIds(runDir), before, 'the same Slurm jobs, no new submission');
  const rows = jobRows(runDir);
  assert.ok(rows.every((row) => row.status !== 'pending'));
  assert.ok(rows.some((row) => row.status === 'succeeded'));
  const log = readFileSync(cluster.jobCompLog, 'utf8');
  for (const id of held.keys()) assert.match(log, new RegExp(`^JobId=${id} .*JobState=COMPLETED`, 'm'));
});

test('through slurmrestd: the API version is negotiated and a run completes', { skip: skip || (!rest && 'slurmrestd is not installed') }, async () => {
  const runDir = join(cluster.dir, 'run-rest');
  const r = await finished(rrlTrain(runDir, ['--slurm-rest', cluster.restUrl!]));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /executor: slurm-rest/);
  const rows = jobRows(runDir);
  assertRunJobs(rows);
  assert.ok(
    rows.some((row) => row.status === 'succeeded'),
    JSON.stringify(rows),
  );
  const rec = JSON.parse(readFileSync(join(runDir, 'jobs', readdirSync(join(runDir, 'jobs'))[0], 'slurm', 'job.json'), 'utf8'));
  assert.equal(rec.backend, 'rest');
  // The version in use is the newest the daemon serves with the job endpoints, not a fixed one.
  const { SlurmRestBackend } = await import('./slurm-rest.js');
  const backend = new SlurmRestBackend({ url: cluster.restUrl!, token: { scontrol: true, env: cluster.env } });
  const version = await backend.apiVersion();
  const token = /SLURM_JWT=(\S+)/.exec(cluster.run('scontrol', ['token']))![1];
  const doc = (await (await fetch(`${cluster.restUrl}/openapi/v3`, { headers: { 'X-SLURM-USER-NAME': 'root', 'X-SLURM-USER-TOKEN': token } })).json()) as {
    paths: Record<string, unknown>;
  };
  const offered = Object.keys(doc.paths)
    .map((p) => /^\/slurm\/(v[\d.]+)\/job\/submit$/.exec(p)?.[1])
    .filter((v): v is string => !!v);
  assert.ok(offered.includes(version));
  assert.deepEqual([...offered].sort((a, b) => a.localeCompare(b, undefined, { numeric: true })).at(-1), version);
});

test("the executor maps a failing batch job to the job's own error, and cancels a job over its wall-clock limit", { skip }, async () => {
  const { SlurmExecutor } = await import('./slurm.js');
  const { SlurmCliBackend } = await import('./slurm-cli.js');
  const { getPublicTask } = await import('../tasks/briefs.js');
  const { arsSpec } = await import('../testing/specs.js');
  const ex = new SlurmExecutor({ pollMs: 200, jobPrefix: 'rrl-unit' }, new SlurmCliBackend(cluster.env));
  try {
    // An invalid spec (the loop would catch it first): rrl job exec exits 1, Slurm says FAILED, status.json says why.
    const bad = await ex.execute({
      spec: { ...arsSpec('cartpole-balance'), seed: -5 },
      brief: getPublicTask('cartpole-balance').brief,
      outDir: join(cluster.dir, 'unit-bad'),
    });
    assert.equal(bad.status, 'failed');
    if (bad.status === 'failed') {
      assert.equal(bad.kind, 'invalid');
      assert.match(bad.error, /seed/);
    }
    // The harness's limit counts from the start of the job: over it, the job is cancelled.
    const { brief, baseline } = getPublicTask('iris-command');
    const prev = process.env.RRL_EXAMPLE_TRAINER_DELAY_MS;
    process.env.RRL_EXAMPLE_TRAINER_DELAY_MS = '60000';
    let slow;
    try {
      slow = await ex.execute({ spec: baseline, brief, outDir: join(cluster.dir, 'unit-slow') }, { timeoutMs: 1500 });
    } finally {
      if (prev === undefined) delete process.env.RRL_EXAMPLE_TRAINER_DELAY_MS;
      else process.env.RRL_EXAMPLE_TRAINER_DELAY_MS = prev;
    }
    assert.equal(slow.status, 'failed');
    if (slow.status === 'failed') {
      assert.equal(slow.kind, 'timeout');
      assert.match(slow.error, /wall-clock limit of 1\.5 s \(slurm job \d+ cancelled\)/);
    }
    await until('the slow job to leave the queue', () => !cluster.run('squeue', ['-h', '-o', '%j']).includes('rrl-unit-'), 20_000);
  } finally {
    await ex.close();
  }
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ResultCache, type CachedResult, engineIdentity, specKey } from './cache.js';
import { evalIdentity } from '../tasks/secret.js';
import { Store } from './store.js';
import { trainAgent } from '../outer/loop.js';
import { LocalExecutor } from '../run/local.js';
import type { Executor } from '../run/executor.js';
import { assertSpec } from '../spec/validate.js';
import { arsSpec } from '../testing/specs.js';
import { ScriptedAgent } from '../testing/scripted-agent.js';
import { classificationTask, syntheticRows, taskDir, toCsv, writeTask } from '../testing/task-files.js';
import { forgetTaskDirs, registerTaskDir } from '../tasks/file/register.js';
import { getPublicTask } from '../tasks/briefs.js';
import { taskFingerprint } from '../tasks/fingerprint.js';

/** The real local executor, counting the jobs it is asked to train. */
function counting(inner: Executor): Executor & { calls: number } {
  const ex = {
    name: inner.name,
    slots: inner.slots,
    calls: 0,
    execute(...args: Parameters<Executor['execute']>) {
      ex.calls += 1;
      return inner.execute(...args);
    },
    cancelAll: (r?: string) => inner.cancelAll(r),
    close: () => inner.close(),
  };
  return ex;
}

/** The key the harness uses: the current secret's identity and the task's fingerprint. */
const keyOf = (spec: { task: string; [field: string]: unknown }): string => specKey(spec, evalIdentity(), taskFingerprint(spec.task));

test('the cache key ignores key order and defaults, and changes with any value', () => {
  const a = assertSpec(arsSpec('cartpole-balance'));
  const reordered = Object.fromEntries(Object.entries(a).reverse());
  assert.equal(keyOf(a), specKey(reordered, evalIdentity(), taskFingerprint(a.task)));
  assert.equal(keyOf(a), keyOf(assertSpec({ ...arsSpec('cartpole-balance'), dataset: undefined })));
  assert.notEqual(keyOf(a), keyOf({ ...a, seed: a.seed + 1 }));
});

test('the key holds the engine identity and the evaluation identity: it changes with the secret and is stable across calls', () => {
  const spec = assertSpec(arsSpec('cartpole-balance'));
  assert.match(engineIdentity(), /^rrl-engine\/[0-9a-f]{16}$/);
  assert.equal(engineIdentity(), engineIdentity());
  const saved = process.env.RRL_EVAL_SECRET;
  try {
    process.env.RRL_EVAL_SECRET = 'secret-one';
    const one = keyOf(spec);
    assert.equal(keyOf(spec), one, 'stable across calls');
    assert.equal(specKey(spec, evalIdentity('secret-one'), taskFingerprint('cartpole-balance')), one);
    process.env.RRL_EVAL_SECRET = 'secret-two';
    assert.notEqual(keyOf(spec), one, 'another secret, another key');
    assert.equal(specKey(spec, evalIdentity('secret-one'), taskFingerprint('cartpole-balance')), one);
    assert.notEqual(specKey(spec, evalIdentity('secret-one'), 'another'), one, 'another task fingerprint, another key');
  } finally {
    if (saved === undefined) delete process.env.RRL_EVAL_SECRET;
    else process.env.RRL_EVAL_SECRET = saved;
  }
});

test('only NaN failures are cached: errors, limits and scorer failures are not', () => {
  const c = new ResultCache(join(mkdtempSync(join(tmpdir(), 'rrl-cache-kinds-')), 'cache.db'));
  const row = (key: string, status: 'succeeded' | 'failed', failureKind: string | null): Omit<CachedResult, 'origin'> => ({
    key,
    task: 'cartpole-balance',
    status,
    failureKind,
    error: failureKind,
    envSteps: 10,
    examples: 0,
    wallSeconds: 1,
    cpuSeconds: 1,
    raw: status === 'succeeded' ? 20 : null,
    normalized: status === 'succeeded' ? 0.1 : null,
    stderr: status === 'succeeded' ? 0.02 : null,
    artifactDir: '/x',
  });
  c.put(row('ok', 'succeeded', null));
  for (const kind of ['nan', 'error', 'timeout', 'out-of-memory', 'worker-exit', 'score-error', 'score-timeout', 'score-out-of-memory'])
    c.put(row(kind, 'failed', kind));
  assert.equal(c.get('ok')?.stderr, 0.02);
  assert.ok(c.get('nan'));
  for (const kind of ['error', 'timeout', 'out-of-memory', 'worker-exit', 'score-error', 'score-timeout', 'score-out-of-memory'])
    assert.equal(c.get(kind), undefined, kind);
  c.close();
});

test('a cache file written before standard errors opens and gains the column', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'rrl-cache-old-')), 'cache.db');
  const db = new Database(path);
  db.exec(`CREATE TABLE results (key TEXT PRIMARY KEY, task TEXT NOT NULL, status TEXT NOT NULL, failure_kind TEXT, error TEXT,
    env_steps INTEGER, examples INTEGER, wall_seconds REAL, cpu_seconds REAL, raw REAL, normalized REAL, artifact_dir TEXT, created_at TEXT NOT NULL)`);
  db.prepare("INSERT INTO results VALUES ('k', 't', 'succeeded', NULL, NULL, 1, 0, 1, 1, 2, 0.5, '/a', 'then')").run();
  db.close();
  const c = new ResultCache(path);
  assert.deepEqual(
    { ...c.get('k') },
    {
      key: 'k',
      task: 't',
      status: 'succeeded',
      failureKind: null,
      error: null,
      envSteps: 1,
      examples: 0,
      wallSeconds: 1,
      cpuSeconds: 1,
      raw: 2,
      normalized: 0.5,
      stderr: null,
      artifactDir: '/a',
      origin: 'harness', // an entry older than the column: not shown as an agent's (store/cache.ts)
    },
  );
  c.close();
});

test('a cache hit returns the recorded result without training, and is recorded as such', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-cache-'));
  const shared = join(tmp, 'cache.db');
  const config = { tasks: ['cartpole-short'], agent: 'random' as const, iterations: 1, group: 3, seed: 11 };
  const ex = counting(new LocalExecutor({ workers: 2 }));
  try {
    const first = await trainAgent(join(tmp, 'a'), config, ex, { cache: shared });
    const trained = ex.calls;
    assert.ok(trained >= 3, 'the first run trains its jobs');
    const second = await trainAgent(join(tmp, 'b'), config, ex, { cache: shared });
    assert.equal(ex.calls, trained, 'the second run trains nothing');
    assert.deepEqual(second.iterations, first.iterations);
    const store = new Store(join(tmp, 'b'));
    const jobs = store.jobs(second.run);
    store.close();
    for (const j of jobs) {
      assert.ok(j.cacheHit, `job ${j.id} is marked as a cache hit`);
      assert.ok(j.artifactDir?.startsWith(join(tmp, 'a')), 'the hit points at the original artifact');
    }
    const c = new ResultCache(shared);
    assert.ok(c.get(keyOf(assertSpec(jobs[0].spec))));
    c.close();
    // Without the cache the same run trains again.
    await trainAgent(join(tmp, 'c'), config, ex, { cache: null });
    assert.ok(ex.calls > trained);
  } finally {
    await ex.close();
  }
});

test('the key holds the task fingerprint: a task file whose data changed misses the cache and trains again; the same file hits', async () => {
  const dir = taskDir('rrl-cache-task-');
  writeTask(
    dir,
    'own.json',
    classificationTask('cache-own', {
      caps: { maxExamples: 20_000, maxWallSeconds: 60 },
      baseline: { epochs: 40, examples: 8000, hidden: [16], learningRate: 0.01 },
    }),
  );
  const shared = join(dir, 'cache.db');
  const ex = counting(new LocalExecutor({ workers: 1 }));
  // Each run: the baseline on the harness's seeds, and one proposal (the baseline's spec).
  const config = { tasks: ['cache-own'], agent: 'random' as const, iterations: 1, group: 1, seed: 5, taskDir: dir };
  const run = async (name: string): Promise<{ normalized: number | null; cacheHit: string | null }> => {
    forgetTaskDirs(); // each run loads the files again, as a new process does
    await registerTaskDir(dir);
    const summary = await trainAgent(join(dir, name), config, ex, { cache: shared, agent: new ScriptedAgent([() => getPublicTask('cache-own').baseline]) });
    const store = new Store(join(dir, name));
    const job = store.jobs(summary.run, { kind: 'proposal' })[0];
    store.close();
    assert.equal(job.status, 'succeeded', job.error ?? '');
    return job;
  };
  try {
    const first = await run('a');
    const trained = ex.calls;
    const fp = taskFingerprint('cache-own');
    assert.ok(first.normalized !== null && first.normalized > 0.4, `the real data scores ${first.normalized}`);
    // The same rows as noise: the class no longer follows the features.
    const noise = syntheticRows(200).map((r, i) => ({ ...r, kind: (i * 7919) % 13 < 6 ? 'up' : 'down' }));
    writeFileSync(join(dir, 'data.csv'), toCsv(noise));
    const second = await run('b');
    assert.notEqual(taskFingerprint('cache-own'), fp, 'new data, new fingerprint');
    assert.equal(ex.calls, 2 * trained, 'the changed data trains every job again');
    assert.ok(
      second.normalized !== null && second.normalized < first.normalized - 0.3,
      `the noise scores ${second.normalized}, not the replayed ${first.normalized}`,
    );
    const third = await run('c');
    assert.equal(ex.calls, 2 * trained, 'the identical file trains nothing');
    assert.ok(third.cacheHit);
    assert.equal(third.normalized, second.normalized);
  } finally {
    await ex.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

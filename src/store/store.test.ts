import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SCHEMA } from './schema.js';
import { Store } from './store.js';

test('a store written before rewards had a group id gains the column and keeps its rows', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-store-'));
  const old = new Database(join(dir, 'store.db'));
  old.exec('CREATE TABLE rewards (job_id INTEGER PRIMARY KEY, reward REAL NOT NULL, advantage REAL, detail TEXT)');
  old.prepare('INSERT INTO rewards (job_id, reward, advantage, detail) VALUES (?, ?, ?, ?)').run(7, 0.5, 1, '{}');
  old.close();
  const store = new Store(dir);
  const cols = (store.db.prepare('PRAGMA table_info(rewards)').all() as { name: string }[]).map((c) => c.name);
  assert.deepEqual(cols, ['job_id', 'reward', 'advantage', 'detail', 'group_id']);
  assert.deepEqual(store.db.prepare('SELECT job_id, reward, group_id FROM rewards').all(), [{ job_id: 7, reward: 0.5, group_id: null }]);
  store.close();
  new Store(dir).close(); // opening again changes nothing
});

test('proposals the agent rejected are recorded invalid at once; rewards carry their group id', () => {
  const store = new Store(mkdtempSync(join(tmpdir(), 'rrl-store-')));
  store.createRun('r', {});
  store.startIteration('r', 0);
  const [a, b] = store.addJobs('r', [
    { round: 0, slot: 0, task: 't', kind: 'proposal', agent: 'llm', spec: { task: 't' }, trace: { kind: 'llm' } },
    {
      round: 0,
      slot: 1,
      task: 't',
      kind: 'proposal',
      agent: 'llm',
      spec: null,
      trace: { kind: 'llm' },
      rejected: { kind: 'llm-error', error: 'HTTP 500' },
    },
  ]);
  store.completeIteration(
    'r',
    0,
    [{ jobId: b, reward: -1, advantage: -1, detail: {}, groupId: 'it0/t' }],
    { agent: 'llm', state: {} },
    { meanReward: -1, meanNormalized: null, bestNormalized: null, updateStats: {} },
  );
  const [ja, jb] = [store.job('r', a)!, store.job('r', b)!];
  assert.equal(ja.status, 'pending');
  assert.deepEqual([jb.status, jb.failureKind, jb.error, jb.reward, jb.groupId], ['invalid', 'llm-error', 'HTTP 500', -1, 'it0/t']);
  assert.ok(jb.finishedAt);
  store.saveCheckpoint('r', 0, { agent: 'llm', state: { adapter: 'x' } });
  assert.deepEqual(store.latestCheckpoint('r'), { iteration: 0, agent: 'llm', state: { adapter: 'x' } });
  store.close();
});

test('a store written before standard errors and evaluation identities opens, keeps its rows and records both', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-store-'));
  const old = new Database(join(dir, 'store.db'));
  old.exec(`CREATE TABLE runs (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, config TEXT NOT NULL, status TEXT NOT NULL, finished_at TEXT);
    CREATE TABLE scores (job_id INTEGER PRIMARY KEY, raw REAL NOT NULL, normalized REAL NOT NULL, scored_at TEXT NOT NULL);`);
  old.prepare("INSERT INTO runs VALUES ('r', 'then', '{}', 'interrupted', NULL)").run();
  old.close();
  const store = new Store(dir);
  assert.equal(store.getRun()?.evalIdentity, null);
  store.setEvalIdentity('r', '0123456789abcdef');
  assert.equal(store.getRun()?.evalIdentity, '0123456789abcdef');
  const [id, other] = store.addJobs('r', [
    { round: 0, slot: 0, task: 't', kind: 'proposal', agent: 'a', spec: {}, trace: null },
    { round: 0, slot: 1, task: 't', kind: 'proposal', agent: 'a', spec: {}, trace: null },
  ]);
  store.finishJob(id, { status: 'succeeded', score: { raw: 30, normalized: 0.6, stderr: 0.05 } });
  store.finishJob(other, { status: 'succeeded', score: { raw: 30, normalized: 0.6 } });
  assert.deepEqual([store.job('r', id)!.normalized, store.job('r', id)!.stderr], [0.6, 0.05]);
  assert.equal(store.job('r', other)!.stderr, null, 'a score without a standard error stores null');
  store.close();
});

test('a store from before successive halving and the patch form gains the rung and patch columns; its jobs read and finish as before', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-store-'));
  const old = new Database(join(dir, 'store.db'));
  // The jobs table as stores were written before rung jobs existed.
  old.exec(`CREATE TABLE runs (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, config TEXT NOT NULL, status TEXT NOT NULL, finished_at TEXT, eval_identity TEXT);
    CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs(id), iteration INTEGER NOT NULL, slot INTEGER NOT NULL,
      task TEXT NOT NULL, kind TEXT NOT NULL, agent TEXT NOT NULL, spec TEXT NOT NULL, trace TEXT, status TEXT NOT NULL, failure_kind TEXT, error TEXT,
      env_steps INTEGER, examples INTEGER, wall_seconds REAL, cpu_seconds REAL, artifact_dir TEXT, cache_hit TEXT, created_at TEXT NOT NULL, finished_at TEXT,
      UNIQUE (run_id, kind, iteration, task, slot));
    INSERT INTO runs VALUES ('r', '2026-01-01', '{}', 'interrupted', NULL, NULL);
    INSERT INTO jobs (run_id, iteration, slot, task, kind, agent, spec, status, created_at)
      VALUES ('r', 0, 0, 't', 'proposal', 'random', '{}', 'pending', '2026-01-01');`);
  old.close();
  const store = new Store(dir);
  const cols = (store.db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name);
  assert.deepEqual(cols.slice(-5), ['rung', 'parent_id', 'share', 'patch', 'cache_origin']);
  const [row] = store.jobs('r');
  assert.equal(row.status, 'pending');
  assert.deepEqual([row.rung, row.parentId, row.share, row.patch], [null, null, null, null]);
  store.finishJob(row.id, { status: 'succeeded', examples: 10, score: { raw: 1, normalized: 0.5 } });
  // Rung jobs of one proposal share its slot space: rung and parent are their own columns.
  const [a, b] = store.addJobs('r', [
    { round: 0, slot: 0, task: 't', kind: 'rung', agent: 'random', spec: {}, trace: null, rung: 0, parentId: row.id, share: 0.25 },
    { round: 0, slot: 1, task: 't', kind: 'rung', agent: 'random', spec: {}, trace: null, rung: 1, parentId: row.id, share: 1 },
  ]);
  const rungs = store.jobs('r', { kind: 'rung' });
  assert.deepEqual(
    rungs.map((j) => [j.id, j.rung, j.parentId, j.share]),
    [
      [a, 0, row.id, 0.25],
      [b, 1, row.id, 1],
    ],
  );
  assert.equal(store.jobs('r', { kind: 'proposal' })[0].normalized, 0.5);
  store.close();
  new Store(dir).close(); // opening again changes nothing
});

test('a store written before task fingerprints opens with an empty table; fingerprints are kept per run and task', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-store-fp-'));
  const old = new Database(join(dir, 'store.db'));
  old.exec(
    'CREATE TABLE runs (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, config TEXT NOT NULL, status TEXT NOT NULL, finished_at TEXT, eval_identity TEXT)',
  );
  old.prepare("INSERT INTO runs VALUES ('r', 'then', '{}', 'finished', NULL, NULL)").run();
  old.close();
  const store = new Store(dir);
  assert.deepEqual([...store.taskFingerprints('r')], []);
  store.setTaskFingerprint('r', 't', 'abc', { parts: [] });
  store.setTaskFingerprint('r', 't', 'def', { parts: [1] });
  assert.deepEqual([...store.taskFingerprints('r')], [['t', { fingerprint: 'def', detail: { parts: [1] } }]]);
  store.addJobs('r', [{ round: 0, slot: 0, task: 't', kind: 'baseline', agent: 'baseline', spec: {}, trace: null }]);
  assert.deepEqual([...store.jobTasks('r')], ['t']);
  store.close();
});

test('a serve store from before episodes gains their tables, keeps its requests, and records a submission numbered in its episode', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-store-'));
  const before = new Store(dir);
  before.createRun('r', { mode: 'serve' });
  const old = before.addRequest('r', 't', [{ spec: { task: 't' }, trace: null }], { key: 'k', digest: 'd' });
  before.db.exec('DROP TABLE episode_submissions; DROP TABLE episodes');
  before.close();
  const store = new Store(dir);
  try {
    assert.equal(store.request('r', old)?.status, 'pending');
    const e = store.addEpisode('r', 't', 2, 'rollout');
    assert.equal(store.episodeByKey('r', 'rollout')?.id, e);
    const a = store.addRequest('r', 't', [{ spec: { task: 't' }, trace: null }], { key: 'a', digest: 'da' }, { id: e, key: 'call-1' });
    const b = store.addRequest('r', 't', [{ spec: { task: 't' }, trace: null }], { key: 'b', digest: 'db' }, { id: e, key: null });
    assert.deepEqual(
      store.episodeSubmissions(e).map((s) => [s.idx, s.request, s.key, s.digest, s.feedback]),
      [
        [1, a, 'call-1', 'da', null],
        [2, b, null, 'db', null],
      ],
    );
    store.setSubmissionFeedback(e, 2, { status: 'invalid' });
    assert.deepEqual(store.episodeSubmissions(e)[1].feedback, { status: 'invalid' });
    assert.equal(store.closeEpisode(e, -0.5, null, { reward: -0.5 }), true);
    assert.equal(store.closeEpisode(e, 0, null, { reward: 0 }), false, 'closed once: a second close changes nothing');
    assert.deepEqual([store.episode('r', e)?.status, store.episode('r', e)?.reward, store.episode('r', e)?.answer], ['closed', -0.5, { reward: -0.5 }]);
  } finally {
    store.close();
  }
});

test("a store from before the round column has its jobs' iteration column renamed to round, values and uniqueness kept", () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-store-round-'));
  const old = new Database(join(dir, 'store.db'));
  old.exec(SCHEMA.replaceAll('round', 'iteration'));
  old.exec(`INSERT INTO runs (id, created_at, config, status) VALUES ('r', '2026-01-01', '{}', 'interrupted');
    INSERT INTO jobs (run_id, iteration, slot, task, kind, agent, spec, status, created_at)
      VALUES ('r', 2, 0, 't', 'proposal', 'random', '{}', 'pending', '2026-01-01');`);
  old.close();
  const store = new Store(dir);
  const cols = (store.db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name);
  assert.ok(cols.includes('round') && !cols.includes('iteration'), cols.join(', '));
  assert.deepEqual(
    store.jobs('r', { round: 2 }).map((j) => [j.round, j.slot]),
    [[2, 0]],
  );
  const job = { round: 2, slot: 0, task: 't', kind: 'proposal' as const, agent: 'random', spec: {}, trace: null };
  assert.throws(() => store.addJobs('r', [job]), /UNIQUE/, 'the unique key names the renamed column');
  assert.equal(store.addJobs('r', [{ ...job, round: 3 }]).length, 1);
  store.close();
  new Store(dir).close(); // opening again changes nothing
});

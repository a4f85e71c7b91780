import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Witness, killAnywhere } from '../testing/crash.js';
import { BASELINE_SEEDS } from './noise.js';
import type { JobView, StoreView } from '../testing/store-view.js';

test('rrl train killed with SIGKILL at 12 random moments and resumed each time loses and reruns no finished job', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-crash-'));
  const r = await killAnywhere({ dir: join(tmp, 'killed'), referenceDir: join(tmp, 'uninterrupted'), kills: 12, seed: 1 });
  assert.equal(r.kills, 12, 'every planned kill came before the run finished');
  assert.equal(r.resumesFailed, 0, r.failures.join('\n'));
  assert.equal(r.resumes + r.restarts, 12, 'the run was started again after every kill');
  assert.deepEqual(r.lost, [], 'no finished job lost');
  assert.deepEqual(r.rerun, [], 'no finished job rerun');
  assert.deepEqual(r.incomplete, [], 'every iteration closed with its rewards and checkpoint, every job finished once');
  assert.ok(r.jobs >= BASELINE_SEEDS + 6, `the baseline on its ${BASELINE_SEEDS} seeds and 3 iterations × 2 proposals (${r.jobs} jobs)`);
  assert.equal(r.jobsFinished, r.jobs);
  assert.ok(r.jobsWatched >= 3, `finished jobs were watched across kills (${r.jobsWatched})`);
  // Kills landed across the run: in a process's startup and while jobs were in flight (training, or
  // trained and not yet scored; the jobs here train in well under a second, so which of the two a
  // time kill hits depends on the machine's load).
  const inFlight = r.killsByPhase.training + r.killsByPhase.scoring;
  assert.ok(r.killsByPhase.startup > 0 && inFlight > 0, `kills landed across the run: ${JSON.stringify(r.killsByPhase)}`);
  // Deterministic configuration (seeded agent and jobs, far from any time cap): the killed run equals the uninterrupted one.
  assert.deepEqual(r.differences, []);
});

const job = (id: number, over: Partial<JobView> = {}): JobView => ({
  id,
  kind: 'proposal',
  round: 0,
  slot: id,
  task: 'iris-species',
  spec: '{}',
  status: 'succeeded',
  failureKind: null,
  error: null,
  artifactDir: `/run/jobs/j0000${id}`,
  finishedAt: '2026-01-01T00:00:01.000Z',
  raw: 0.9,
  normalized: 0.8,
  scoredAt: '2026-01-01T00:00:01.000Z',
  curvePoints: 10,
  reward: 0.5,
  advantage: 1,
  groupId: 'it0/iris-species',
  artifactStatus: { mtimeNs: '1000', text: '{"status":"succeeded"}' },
  ...over,
});

const view = (jobs: JobView[], finishedAt = '2026-01-01T00:00:02.000Z'): StoreView => ({
  run: { id: 'run', status: 'running' },
  jobs,
  iterations: [{ idx: 0, status: 'done', meanReward: 0.5, meanNormalized: 0.8, bestNormalized: 0.8, finishedAt }],
  checkpoints: [],
});

test('the witness reports a finished job that is lost, trained again, scored again or paid again', () => {
  const witness = new Witness();
  witness.see(view([job(1), job(2), job(3), job(4), job(5)]), 'after kill 1');
  witness.see(view([job(1)]), 'after kill 2'); // jobs 2-5 gone
  assert.equal(witness.lost.length, 4);
  const w = new Witness();
  w.see(view([job(1), job(2), job(3), job(4), job(5)]), 'after kill 1');
  w.see(
    view(
      [
        job(1),
        job(2, { status: 'pending', finishedAt: null }),
        job(3, { artifactStatus: { mtimeNs: '2000', text: '{"status":"succeeded"}' } }),
        job(4, { scoredAt: '2026-01-01T00:00:09.000Z' }),
        job(5, { reward: 0.7 }),
      ],
      'later',
    ),
    'after kill 2',
  );
  assert.deepEqual(w.lost, ['job 2 (proposal, round 0, slot 2), finished after kill 1: pending again after kill 2']);
  assert.deepEqual(w.rerun, [
    "job 3 (proposal, round 0, slot 3), finished after kill 1: its artifact's status.json was written again after kill 2",
    'job 4 (proposal, round 0, slot 4), finished after kill 1: its result changed after kill 2: ' +
      '["succeeded",null,null,0.9,0.8,"2026-01-01T00:00:01.000Z",10,"/run/jobs/j00004"] → ["succeeded",null,null,0.9,0.8,"2026-01-01T00:00:09.000Z",10,"/run/jobs/j00004"]',
  ]);
  assert.equal(w.changed.length, 2, w.changed.join('\n')); // job 5's reward, iteration 0 closed again
  assert.match(w.changed[0], /job 5 .*reward paid again/);
  assert.match(w.changed[1], /iteration 0: closed again/);
});

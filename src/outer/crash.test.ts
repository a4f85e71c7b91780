import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Witness, killAnywhere } from '../testing/crash.js';
import type { StoreView } from '../testing/store-view.js';

let reportFinal: StoreView | undefined;

test('rrl train killed with SIGKILL at 20 random moments and resumed each time loses and reruns no finished job', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-crash-'));
  const r = await killAnywhere({ dir: join(tmp, 'killed'), referenceDir: join(tmp, 'uninterrupted'), kills: 20, seed: 1 });
  reportFinal = r.final;
  assert.equal(r.kills, 20, 'every planned kill came before the run finished');
  assert.equal(r.resumesFailed, 0, r.failures.join('\n'));
  assert.ok(r.resumes >= 15, `the run was resumed after the kills (${r.resumes} resumes, ${r.restarts} restarts before the run was recorded)`);
  assert.deepEqual(r.lost, [], 'no finished job lost');
  assert.deepEqual(r.rerun, [], 'no finished job rerun');
  assert.deepEqual(r.incomplete, [], 'every iteration closed with its rewards and checkpoint, every job finished');
  assert.equal(r.jobs, 7, 'one baseline and 3 iterations × 2 proposals, no duplicates');
  assert.equal(r.jobsFinished, 7);
  assert.ok(r.jobsWatched >= 3, `finished jobs were watched across kills (${r.jobsWatched})`);
  const phases = Object.entries(r.killsByPhase).filter(([, n]) => n > 0).map(([p]) => p);
  assert.ok(phases.includes('startup') && phases.includes('training'), `kills landed across the run: ${JSON.stringify(r.killsByPhase)}`);
  // The configuration is deterministic (seeded agent, seeded jobs, no timeouts hit): the killed run equals the uninterrupted one.
  assert.deepEqual(r.differences, []);
});

test('the witness reports a finished job that is lost, trained again or paid again', (t) => {
  if (!reportFinal) return t.skip('needs the run of the test above');
  const view = reportFinal;
  const witness = new Witness();
  witness.see(view, 'first');
  const job = view.jobs.find((j) => j.kind === 'proposal' && j.artifactStatus)!;
  const other = view.jobs.find((j) => j.kind === 'proposal' && j.id !== job.id)!;
  const iteration = view.iterations[0];
  witness.see(
    {
      ...view,
      jobs: view.jobs.map((j) =>
        j.id === job.id
          ? { ...j, artifactStatus: { ...j.artifactStatus!, mtimeNs: `${BigInt(j.artifactStatus!.mtimeNs) + 1n}` } }
          : j.id === other.id
            ? { ...j, status: 'pending', finishedAt: null, reward: (j.reward ?? 0) + 1 }
            : j,
      ),
      iterations: [{ ...iteration, finishedAt: 'later' }, ...view.iterations.slice(1)],
    },
    'second',
  );
  assert.equal(witness.rerun.length, 1);
  assert.match(witness.rerun[0], new RegExp(`job ${job.id} .*status\\.json was written again second`));
  assert.equal(witness.lost.length, 1);
  assert.match(witness.lost[0], new RegExp(`job ${other.id} .*pending again second`));
  assert.equal(witness.changed.length, 2, witness.changed.join('\n'));
});

import test from 'node:test';
import { BASELINE_ATTEMPTS, BASELINE_SEEDS } from '../noise.js';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainAgent } from '../loop.js';
import { LocalExecutor } from '../../run/local.js';
import { Store } from '../../store/store.js';
import { ResultCache, specKey } from '../../store/cache.js';
import { assertSpec } from '../../spec/validate.js';
import { evalIdentity } from '../../tasks/secret.js';
import { taskFingerprint } from '../../tasks/fingerprint.js';

process.env.RRL_EVAL_SECRET = 'scoring-test-secret';
const config = { tasks: ['iris-species'], agent: 'baseline' as const, iterations: 1, group: 1, seed: 5 };

test('a run whose scoring fails records each job as a score failure, finishes, caches none of them, and records its secret', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-scoring-'));
  const cache = join(tmp, 'cache.db');
  const ex = new LocalExecutor({ workers: 1 });
  try {
    // A 1 ms scoring limit: no hidden evaluation finishes in it, so every scoring fails.
    const first = await trainAgent(join(tmp, 'a'), config, ex, { cache, scoring: { timeoutMs: 1, workers: 1 } });
    const store = new Store(join(tmp, 'a'));
    const jobs = store.jobs(first.run);
    assert.equal(store.getRun()?.status, 'finished');
    assert.equal(store.getRun()?.evalIdentity, evalIdentity('scoring-test-secret'));
    store.close();
    // A score timeout is the machine's failure: each baseline seed is tried the attempt limit.
    assert.equal(jobs.length, BASELINE_SEEDS * BASELINE_ATTEMPTS + 1, 'the baseline on every seed and attempt, and one proposal (retried in place)');
    for (const j of jobs) {
      assert.deepEqual([j.status, j.failureKind, j.normalized], ['failed', 'score-timeout', null]);
      assert.match(j.error ?? '', /^scoring: exceeded the wall-clock limit/);
      assert.ok((j.examples ?? 0) > 0, 'the training itself is recorded');
    }
    const proposal = jobs.find((j) => j.kind === 'proposal')!;
    // The scorer's time limit is the harness's, not the job's: tried again once, then neither paid nor charged.
    assert.equal(proposal.reward, null);
    assert.equal(proposal.advantage, null);
    const c = new ResultCache(cache);
    assert.equal(
      c.get(specKey(assertSpec(proposal.spec), evalIdentity(), taskFingerprint(assertSpec(proposal.spec).task))),
      undefined,
      'a score failure is not cached',
    );
    c.close();

    // With the default limits the same jobs train again and score, with standard errors.
    const second = await trainAgent(join(tmp, 'b'), config, ex, { cache });
    const s2 = new Store(join(tmp, 'b'));
    const again = s2.jobs(second.run);
    s2.close();
    for (const j of again) {
      assert.equal(j.status, 'succeeded', j.error ?? '');
      assert.equal(j.cacheHit, null);
      assert.ok(j.stderr !== null && j.stderr >= 0 && j.normalized !== null);
    }
  } finally {
    await ex.close();
  }
});

test('resuming a run under another evaluation secret fails with one line naming both', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-scoring-resume-'));
  const store = new Store(dir);
  store.createRun('run-x', config, evalIdentity('the-old-secret'));
  store.close();
  const ex = new LocalExecutor({ workers: 1 });
  try {
    await assert.rejects(trainAgent(dir, null, ex), (err: Error) => {
      assert.equal(err.message.split('\n').length, 1);
      assert.match(
        err.message,
        new RegExp(`scored with evaluation secret ${evalIdentity('the-old-secret')} but the current secret is ${evalIdentity('scoring-test-secret')}`),
      );
      return true;
    });
  } finally {
    await ex.close();
  }
});

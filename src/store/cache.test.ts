import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResultCache, specKey } from './cache.js';
import { Store } from './store.js';
import { train } from '../outer/loop.js';
import { LocalExecutor } from '../run/local.js';
import type { Executor } from '../run/executor.js';
import { assertSpec } from '../spec/validate.js';
import { arsSpec } from '../testing/specs.js';

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

test('the cache key ignores key order and defaults, and changes with any value', () => {
  const a = assertSpec(arsSpec('cartpole-balance'));
  const reordered = Object.fromEntries(Object.entries(a).reverse());
  assert.equal(specKey(a), specKey(reordered));
  assert.equal(specKey(a), specKey(assertSpec({ ...arsSpec('cartpole-balance'), dataset: undefined })));
  assert.notEqual(specKey(a), specKey({ ...a, seed: a.seed + 1 }));
});

test('a cache hit returns the recorded result without training, and is recorded as such', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-cache-'));
  const shared = join(tmp, 'cache.db');
  const config = { tasks: ['cartpole-short'], agent: 'random' as const, iterations: 1, group: 3, seed: 11 };
  const ex = counting(new LocalExecutor({ workers: 2 }));
  try {
    const first = await train(join(tmp, 'a'), config, ex, { cache: shared });
    const trained = ex.calls;
    assert.ok(trained >= 3, 'the first run trains its jobs');
    const second = await train(join(tmp, 'b'), config, ex, { cache: shared });
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
    assert.ok(c.get(specKey(assertSpec(jobs[0].spec))));
    c.close();
    // Without the cache the same run trains again.
    await train(join(tmp, 'c'), config, ex, { cache: null });
    assert.ok(ex.calls > trained);
  } finally {
    await ex.close();
  }
});

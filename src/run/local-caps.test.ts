import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from './local.js';
import { getPublicTask } from '../tasks/briefs.js';
import { arsSpec, heavyDqnSpec } from '../testing/specs.js';

const { brief } = getPublicTask('cartpole-balance');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-local-caps-'));

test("the engine's own wall-clock and memory caps reach the executor as timeout and out-of-memory, and the worker goes on", async () => {
  const ex = new LocalExecutor({ workers: 1 });
  try {
    // No executor time limit: only the engine's cap (the brief's maxWallSeconds) stops this job.
    const slow = await ex.execute({ spec: heavyDqnSpec(), brief: { ...brief, budget: { ...brief.budget, maxWallSeconds: 2 } }, outDir: join(tmp, 'slow') });
    assert.equal(slow.status, 'failed');
    if (slow.status === 'failed') {
      assert.equal(slow.kind, 'timeout');
      assert.match(slow.error, /^TimeLimitError: budget\.maxWallSeconds: the job ran [\d.]+ s, past the task's wall-clock cap of 2 s$/);
    }
    assert.equal(JSON.parse(readFileSync(join(tmp, 'slow', 'status.json'), 'utf8')).kind, 'timeout');

    const big = await ex.execute({ spec: heavyDqnSpec([512, 512, 512, 512]), brief: { ...brief, budget: { ...brief.budget, maxMemoryMb: 4 } }, outDir: join(tmp, 'big') });
    assert.equal(big.status, 'failed');
    if (big.status === 'failed') {
      assert.equal(big.kind, 'out-of-memory');
      assert.match(big.error, /^MemoryLimitError: budget\.maxMemoryMb: the job's memory reached [\d.]+ MB .*past the task's cap of 4 MB$/);
    }
    assert.equal(JSON.parse(readFileSync(join(tmp, 'big', 'status.json'), 'utf8')).kind, 'out-of-memory');

    const next = await ex.execute({ spec: arsSpec('cartpole-balance', 2000), brief, outDir: join(tmp, 'after') });
    assert.equal(next.status, 'succeeded');
  } finally {
    await ex.close();
  }
});

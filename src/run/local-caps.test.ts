import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from './local.js';
import { getPublicTask } from '../tasks/briefs.js';
import { arsSpec, cleanRlPpoSpec } from '../testing/specs.js';

const { brief } = getPublicTask('cartpole-balance');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-local-caps-'));

test("the engine's own memory cap reaches the executor as out-of-memory, and the worker goes on", async () => {
  const ex = new LocalExecutor({ workers: 1 });
  try {
    // A small PPO job's estimate (about 0.2 MB) fits a 1 MB cap, but its networks' WebAssembly
    // memory and the JS heap it allocates pass a megabyte as it trains: the engine stops it.
    const small = cleanRlPpoSpec('cartpole-balance', 20_000);
    small.model.hidden = [16];
    const big = await ex.execute({
      spec: small,
      brief: { ...brief, budget: { ...brief.budget, maxMemoryMb: 1 } },
      outDir: join(tmp, 'big'),
    });
    assert.equal(big.status, 'failed');
    if (big.status === 'failed') {
      assert.equal(big.kind, 'out-of-memory');
      assert.match(big.error, /^MemoryLimitError: budget\.maxMemoryMb: the job's memory reached [\d.]+ MB .*past the task's cap of 1 MB$/);
    }
    assert.equal(JSON.parse(readFileSync(join(tmp, 'big', 'status.json'), 'utf8')).kind, 'out-of-memory');

    const next = await ex.execute({ spec: arsSpec('cartpole-balance', 2000), brief, outDir: join(tmp, 'after') });
    assert.equal(next.status, 'succeeded');
  } finally {
    await ex.close();
  }
});

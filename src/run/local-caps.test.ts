import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from './local.js';
import { getPublicTask } from '../tasks/briefs.js';
import { arsSpec } from '../testing/specs.js';
import { dataForJob } from '../outer/score.js';

const { brief } = getPublicTask('cartpole-balance');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-local-caps-'));

test("the engine's own memory cap reaches the executor as out-of-memory, and the worker goes on", async () => {
  const ex = new LocalExecutor({ workers: 1 });
  try {
    // The iris baseline's estimate (about 0.3 MB) fits a 1 MB cap, but the job's first tensor
    // work grows the fresh worker's WebAssembly memory by megabytes: the engine stops it.
    const iris = getPublicTask('iris-species');
    const big = await ex.execute({
      spec: iris.baseline,
      brief: { ...iris.brief, budget: { ...iris.brief.budget, maxMemoryMb: 1 } },
      outDir: join(tmp, 'big'),
      data: dataForJob('iris-species', iris.baseline),
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

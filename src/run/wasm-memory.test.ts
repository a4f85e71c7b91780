/**
 * Attack 1 of issue 10 end to end, through the local executor: a real training job whose
 * WebAssembly memory (the fused engine's network) cannot be allocated fails as out-of-memory
 * (status.json too), and the next job on the same one-worker executor succeeds. A file of its own
 * because it lowers, for this whole test process, the largest WebAssembly memory V8 allows (a
 * process-wide flag): 64 MiB instead of 4 GiB.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { getPublicTask } from '../tasks/briefs.js';
import { cleanRlPpoSpec } from '../testing/specs.js';
import { validateSpec } from '../inner/spec-check.js';
import { LocalExecutor } from './local.js';

v8.setFlagsFromString('--wasm-max-mem-pages=1024');

const { brief } = getPublicTask('cartpole-balance');

test('a job whose WebAssembly memory runs out is out-of-memory, and the next job on the executor succeeds', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-wasm-'));
  const ex = new LocalExecutor({ workers: 1 });
  try {
    // One minibatch of 8,192 rows through [512, 512] actor and critic: about 100 MB of activations,
    // gradients and scratch per network, within the task's 1 GB cap and the scoring-cost cap (so
    // validation lets it run) but past this process's 64 MiB WebAssembly limit.
    const big = cleanRlPpoSpec('cartpole-balance', 8192);
    Object.assign(big.environment, { numEnvs: 32 });
    Object.assign(big.algorithm, { minibatches: 1, epochs: 1, rolloutSteps: 256 });
    big.model.hidden = [512, 512];
    assert.ok(validateSpec(big, brief).ok);
    const failed = await ex.execute({ spec: big, brief, outDir: join(tmp, 'big') });
    assert.equal(failed.status, 'failed');
    if (failed.status === 'failed') {
      assert.equal(failed.kind, 'out-of-memory');
      assert.match(failed.error, /^ran out of WebAssembly \(tensor\) memory: .*; the worker was replaced$/);
    }
    const status = JSON.parse(readFileSync(join(tmp, 'big', 'status.json'), 'utf8')) as { status: string; kind: string };
    assert.deepEqual([status.status, status.kind], ['failed', 'out-of-memory']);
    const next = await ex.execute({ spec: cleanRlPpoSpec('cartpole-balance', 512), brief, outDir: join(tmp, 'next') });
    assert.equal(next.status, 'succeeded', JSON.stringify(next));
    if (next.status === 'succeeded') assert.equal(next.artifact.backend, 'fused-wasm-simd');
  } finally {
    await ex.close();
    rmSync(tmp, { recursive: true, force: true });
  }
});

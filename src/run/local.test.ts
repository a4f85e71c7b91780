import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from './local.js';
import { getPublicTask } from '../tasks/briefs.js';
import { arsSpec, cleanRlPpoSpec } from '../testing/specs.js';

const { brief } = getPublicTask('cartpole-balance');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-local-'));

test('a job runs in a worker and leaves its artifact', async () => {
  const ex = new LocalExecutor({ workers: 1 });
  try {
    const out = join(tmp, 'ok');
    const r = await ex.execute({ spec: arsSpec('cartpole-balance'), brief, outDir: out });
    assert.equal(r.status, 'succeeded');
    if (r.status !== 'succeeded') return;
    assert.ok(r.artifact.cost.envSteps <= 10_000);
    assert.ok(r.curve.some((p) => p.name === 'charts/episodic_return'));
    for (const f of ['spec.json', 'policy.json', 'curve.jsonl', 'cost.json', 'status.json']) readFileSync(join(out, f));
  } finally {
    await ex.close();
  }
});

test('a job past its wall-clock limit fails with a reason and the pool goes on', async () => {
  const ex = new LocalExecutor({ workers: 1 });
  try {
    // The limit is well past the worker's module loading: Node 20 can abort the whole process
    // when a worker is terminated while it is still loading its modules.
    const slow = await ex.execute({ spec: cleanRlPpoSpec('cartpole-balance', 100_000), brief, outDir: join(tmp, 'slow') }, { timeoutMs: 6000 });
    assert.equal(slow.status, 'failed');
    if (slow.status === 'failed') {
      assert.equal(slow.kind, 'timeout');
      assert.match(slow.error, /wall-clock limit of 6\.0 s/);
    }
    const status = JSON.parse(readFileSync(join(tmp, 'slow', 'status.json'), 'utf8'));
    assert.equal(status.kind, 'timeout');
    const next = await ex.execute({ spec: arsSpec('cartpole-balance'), brief, outDir: join(tmp, 'after') });
    assert.equal(next.status, 'succeeded');
  } finally {
    await ex.close();
  }
});

test('a job that exhausts its heap fails as out-of-memory', async () => {
  const ex = new LocalExecutor({ workers: 1, memoryMb: 8 });
  try {
    const r = await ex.execute({ spec: arsSpec('cartpole-balance'), brief, outDir: join(tmp, 'oom') });
    assert.equal(r.status, 'failed');
    if (r.status === 'failed') {
      assert.equal(r.kind, 'out-of-memory');
      assert.match(r.error, /8 MB/);
    }
  } finally {
    await ex.close();
  }
});

test('a job whose reward turns NaN fails as nan, naming the expression', async () => {
  const ex = new LocalExecutor({ workers: 1 });
  try {
    const spec = { ...arsSpec('cartpole-balance'), reward: { expression: 'r + sqrt(x)' } };
    const r = await ex.execute({ spec, brief, outDir: join(tmp, 'nan') });
    assert.equal(r.status, 'failed');
    if (r.status === 'failed') {
      assert.equal(r.kind, 'nan');
      assert.match(r.error, /reward\.expression "r \+ sqrt\(x\)" gave NaN/);
    }
  } finally {
    await ex.close();
  }
});

test('cancelling stops a running job', async () => {
  const ex = new LocalExecutor({ workers: 1 });
  try {
    const out = join(tmp, 'cancel');
    const p = ex.execute({ spec: cleanRlPpoSpec('cartpole-balance', 100_000), brief, outDir: out });
    // Cancel once the job runs (it wrote its spec), not while the worker still loads its
    // modules: Node 20 can abort the whole process when a worker is terminated mid-load.
    while (!existsSync(join(out, 'spec.json'))) await new Promise((r) => setTimeout(r, 50));
    ex.cancelAll('test cancels');
    const r = await p;
    assert.equal(r.status, 'failed');
    if (r.status === 'failed') assert.equal(r.kind, 'cancelled');
  } finally {
    await ex.close();
  }
});

test('jobs stopped while their worker still loads its modules fail with a reason, and the process lives on', async () => {
  // Node ≥ 20.19 aborted the whole process when a worker was terminated inside a synchronous
  // require() of an ES module (the worker's load takes about 0.5 s here); limits from 10 ms to
  // 900 ms land in every stage of the load.
  const ex = new LocalExecutor({ workers: 1 });
  try {
    for (let ms = 10; ms <= 900; ms += 30) {
      const r = await ex.execute({ spec: cleanRlPpoSpec('cartpole-balance', 100_000), brief, outDir: join(tmp, `early-${ms}`) }, { timeoutMs: ms });
      assert.equal(r.status, 'failed');
      if (r.status === 'failed') assert.equal(r.kind, 'timeout', `${ms} ms: ${r.error}`);
    }
    const next = await ex.execute({ spec: arsSpec('cartpole-balance'), brief, outDir: join(tmp, 'after-early') });
    assert.equal(next.status, 'succeeded');
  } finally {
    await ex.close();
  }
});

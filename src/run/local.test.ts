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
    // A wide network and many epochs: well past 6 s on the fused engine (about 4 s at 64-64).
    const spec = cleanRlPpoSpec('cartpole-balance', 100_000);
    const slow = await ex.execute(
      { spec: { ...spec, model: { hidden: [512, 512], activation: 'tanh' }, algorithm: { ...spec.algorithm, epochs: 20 } }, brief, outDir: join(tmp, 'slow') },
      { timeoutMs: 6000 },
    );
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

test("a job's worker, and the program it runs, never see the evaluation secret or credentials", async () => {
  const names = { RRL_EVAL_SECRET: 'eval-secret', OPENAI_API_KEY: 'sk-test', GITHUB_TOKEN: 'gh-test' };
  const saved = Object.fromEntries(Object.keys(names).map((k) => [k, process.env[k]]));
  Object.assign(process.env, names, { RRL_LOCAL_TEST_PLAIN: 'plain' });
  // A task whose outside trainer writes what it sees of the environment into the job directory.
  const iris = getPublicTask('iris-command');
  const dump = `require('fs').writeFileSync(process.argv[2] + '/env.json', JSON.stringify(Object.fromEntries(${JSON.stringify([...Object.keys(names), 'RRL_LOCAL_TEST_PLAIN'])}.map((n) => [n, process.env[n] ?? null])))); process.exit(1);`;
  const snoop = { ...iris.brief, trainer: { kind: 'command' as const, argv: ['node', '-e', dump], description: 'writes its environment' } };
  const ex = new LocalExecutor({ workers: 1 });
  try {
    const out = join(tmp, 'env');
    const r = await ex.execute({ spec: iris.baseline, brief: snoop, outDir: out });
    assert.equal(r.status, 'failed'); // the snooping trainer exits 1 after writing env.json
    const seen = JSON.parse(readFileSync(join(out, 'env.json'), 'utf8')) as Record<string, string | null>;
    assert.deepEqual(seen, { RRL_EVAL_SECRET: null, OPENAI_API_KEY: null, GITHUB_TOKEN: null, RRL_LOCAL_TEST_PLAIN: 'plain' });
  } finally {
    await ex.close();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    delete process.env.RRL_LOCAL_TEST_PLAIN;
  }
});

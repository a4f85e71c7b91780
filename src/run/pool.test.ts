import test from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { WorkerPool, type TaskOutcome } from './pool.js';
import type { TestPayload, TestResult } from './fixtures/pool-worker.js';
import { REPORT_BYTES, readReport, writeReport } from './pool-entry.js';
import { wasmFailure } from '../inner/wasm-failure.js';

const workerFile = new URL('./fixtures/pool-worker.js', import.meta.url);

function makePool(workers: number, maxOldGenerationSizeMb?: number): WorkerPool<TestPayload, TestResult> {
  return new WorkerPool<TestPayload, TestResult>({ workerFile, workers, maxOldGenerationSizeMb });
}

/** Asserts a failure of the given kind and returns its message. */
function failure(outcome: TaskOutcome<TestResult>, kind: string): string {
  assert.equal(outcome.ok, false, `expected a '${kind}' failure, got ${JSON.stringify(outcome)}`);
  if (outcome.ok) throw new Error('unreachable');
  assert.equal(outcome.kind, kind, `message: ${outcome.message}`);
  assert.ok(outcome.wallSeconds >= 0);
  return outcome.message;
}

/** Asserts that the pool still answers an echo. */
async function assertStillWorks(pool: WorkerPool<TestPayload, TestResult>, value: unknown = 'still alive'): Promise<void> {
  const outcome = await pool.run({ mode: 'echo', value });
  assert.ok(outcome.ok, `pool no longer works: ${JSON.stringify(outcome)}`);
  assert.deepEqual(outcome.value.value, value);
}

test('echo returns the structured-cloned value and the wall time', async () => {
  const pool = makePool(1);
  try {
    assert.equal(pool.size, 1);
    const value = { a: [1, 2.5, 'x'], b: { c: null, d: true } };
    const outcome = await pool.run({ mode: 'echo', value });
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.value.value, value);
    assert.ok(outcome.wallSeconds >= 0);
  } finally {
    await pool.close();
  }
});

test('an exception in the worker is an error with its message, and keeps a custom name', async () => {
  const pool = makePool(1);
  try {
    assert.equal(failure(await pool.run({ mode: 'throw', message: 'bad hyperparameter' }), 'error'), 'bad hyperparameter');
    await assertStillWorks(pool);
    assert.equal(failure(await pool.run({ mode: 'nan-error' }), 'error'), 'NaNError: loss became NaN');
    await assertStillWorks(pool);
  } finally {
    await pool.close();
  }
});

test('a busy task past its limit is a timeout, its worker is stopped, and the pool goes on', async () => {
  const pool = makePool(1);
  try {
    const heartbeat = new Int32Array(new SharedArrayBuffer(4));
    const outcome = await pool.run({ mode: 'sleep', ms: 60_000, busy: true, heartbeat }, { timeoutMs: 250 });
    assert.match(failure(outcome, 'timeout'), /exceeded the wall-clock limit of 0\.25 s/);
    // The busy loop bumps the heartbeat non-stop; once its thread is terminated it stands still.
    let last = Atomics.load(heartbeat, 0);
    let stable = false;
    for (let i = 0; i < 100 && !stable; i++) {
      await delay(50);
      const now = Atomics.load(heartbeat, 0);
      stable = now === last;
      last = now;
    }
    assert.ok(stable, 'the timed-out task kept running');
    await assertStillWorks(pool);
    // An awaiting (non-busy) task times out the same way.
    const awaiting = await pool.run({ mode: 'sleep', ms: 60_000 }, { timeoutMs: 1000 });
    assert.equal(failure(awaiting, 'timeout'), 'exceeded the wall-clock limit of 1.0 s');
    await assertStillWorks(pool);
  } finally {
    await pool.close();
  }
});

test('the wall-clock limit counts from when a worker takes the task, not while it is queued', async () => {
  const pool = makePool(1);
  try {
    const first = pool.run({ mode: 'sleep', ms: 700 });
    const second = pool.run({ mode: 'echo', value: 2 }, { timeoutMs: 500 });
    const unlimited = pool.run({ mode: 'echo', value: 3 }, { timeoutMs: Infinity });
    assert.ok((await first).ok);
    const outcome = await second;
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.ok((await unlimited).ok);
  } finally {
    await pool.close();
  }
});

test('heap exhaustion is out-of-memory naming the limit', async () => {
  const pool = makePool(1, 32);
  try {
    assert.match(failure(await pool.run({ mode: 'oom' }), 'out-of-memory'), /32 MB/);
    await assertStillWorks(pool);
  } finally {
    await pool.close();
  }
});

test('a worker that calls process.exit is worker-exit with its code', async () => {
  const pool = makePool(1);
  try {
    assert.match(failure(await pool.run({ mode: 'exit' }), 'worker-exit'), /exited with code 3/);
    await assertStillWorks(pool);
  } finally {
    await pool.close();
  }
});

test('the caller aborting a running or queued task cancels it', async () => {
  const pool = makePool(1);
  try {
    const controller = new AbortController();
    const running = pool.run({ mode: 'sleep', ms: 60_000, busy: true }, { signal: controller.signal });
    const queued = pool.run({ mode: 'echo', value: 'queued' }, { signal: controller.signal });
    await delay(100);
    controller.abort('user pressed stop');
    assert.equal(failure(await running, 'cancelled'), 'cancelled by the caller: user pressed stop');
    assert.equal(failure(await queued, 'cancelled'), 'cancelled by the caller: user pressed stop');
    // An already-aborted signal never starts the task.
    assert.equal(failure(await pool.run({ mode: 'echo', value: 1 }, { signal: controller.signal }), 'cancelled'), 'cancelled by the caller: user pressed stop');
    await assertStillWorks(pool);
  } finally {
    await pool.close();
  }
});

test('cancelAll cancels queued and running tasks, and the pool goes on', async () => {
  const pool = makePool(2);
  try {
    const tasks = [
      pool.run({ mode: 'sleep', ms: 60_000, busy: true }),
      pool.run({ mode: 'sleep', ms: 60_000 }),
      pool.run({ mode: 'echo', value: 'queued 1' }),
      pool.run({ mode: 'echo', value: 'queued 2' }),
    ];
    await delay(100);
    pool.cancelAll('run stopped');
    for (const outcome of await Promise.all(tasks)) {
      assert.equal(failure(outcome, 'cancelled'), 'run stopped');
    }
    await Promise.all([assertStillWorks(pool, 'a'), assertStillWorks(pool, 'b')]);
  } finally {
    await pool.close();
  }
});

test('with two workers two tasks really run at the same time', async () => {
  const pool = makePool(2);
  try {
    // Each task waits at a shared barrier until the other has arrived: only concurrent tasks meet.
    const barrier = new Int32Array(new SharedArrayBuffer(4));
    const [a, b] = await Promise.all([
      pool.run({ mode: 'barrier', barrier, parties: 2, waitMs: 20_000 }),
      pool.run({ mode: 'barrier', barrier, parties: 2, waitMs: 20_000 }),
    ]);
    assert.ok(a.ok && b.ok);
    assert.ok(a.value.met && b.value.met, 'the two tasks did not overlap');
    assert.notEqual(a.value.threadId, b.value.threadId);
    assert.ok(a.value.startedAt! <= b.value.finishedAt! && b.value.startedAt! <= a.value.finishedAt!);
  } finally {
    await pool.close();
  }
});

test('a missing worker module or an uncloneable payload or result is an error, not a crash', async () => {
  const missing = new WorkerPool<TestPayload, TestResult>({
    workerFile: new URL('./fixtures/no-such-worker.js', import.meta.url),
    workers: 1,
  });
  try {
    assert.match(failure(await missing.run({ mode: 'echo', value: 1 }), 'error'), /no-such-worker/);
    assert.match(failure(await missing.run({ mode: 'echo', value: 2 }), 'error'), /no-such-worker/);
  } finally {
    await missing.close();
  }
  const pool = makePool(1);
  try {
    const outcome = await pool.run({ mode: 'echo', value: () => 1 });
    assert.match(failure(outcome, 'error'), /could not be cloned/);
    await assertStillWorks(pool);
    assert.match(failure(await pool.run({ mode: 'bad-result' }), 'error'), /cannot be structured-cloned/);
    await assertStillWorks(pool);
  } finally {
    await pool.close();
  }
});

test('a closed pool cancels what it still holds and refuses new tasks', async () => {
  const pool = makePool(1);
  const running = pool.run({ mode: 'sleep', ms: 60_000, busy: true });
  const queued = pool.run({ mode: 'echo', value: 1 });
  await delay(50);
  await pool.close();
  failure(await running, 'cancelled');
  failure(await queued, 'cancelled');
  assert.equal(failure(await pool.run({ mode: 'echo', value: 1 }), 'cancelled'), 'the pool is closed');
});

test('a task whose tfjs WebAssembly heap runs out is out-of-memory, its worker is replaced, and a tfjs task then succeeds', async () => {
  const pool = makePool(1);
  try {
    const before = await pool.run({ mode: 'tf', n: 100 });
    assert.ok(before.ok, JSON.stringify(before));
    assert.deepEqual(before.value.value, { sum: 5050, backend: 'wasm' });
    // 4096 pages of 64 KiB: the heap stops at 256 MB instead of 4 GiB (a V8 flag for this test process).
    const message = failure(await pool.run({ mode: 'wasm-oom', maxPages: 4096, chunkMb: 16 }), 'out-of-memory');
    assert.match(
      message,
      /^ran out of WebAssembly \(tensor\) memory: (RuntimeError: )?.*(Aborted\(|memory access out of bounds|Cannot enlarge memory).*; the worker was replaced$/,
    );
    assert.ok(!message.includes('\n'), message);
    const after = await pool.run({ mode: 'tf', n: 100 });
    assert.ok(after.ok, JSON.stringify(after));
    assert.deepEqual(after.value.value, { sum: 5050, backend: 'wasm' });
    assert.notEqual(after.value.threadId, before.value.threadId, 'the poisoned worker was reused');
  } finally {
    await pool.close();
  }
});

test('a WebAssembly trap ends its worker too (worker-exit, with the trap)', async () => {
  const pool = makePool(1);
  try {
    const first = await pool.run({ mode: 'echo', value: 1 });
    assert.ok(first.ok);
    assert.match(failure(await pool.run({ mode: 'wasm-trap' }), 'worker-exit'), /WebAssembly trapped: RuntimeError: unreachable.*the worker was replaced/);
    const next = await pool.run({ mode: 'echo', value: 2 });
    assert.ok(next.ok);
    assert.notEqual(next.value.threadId, first.value.threadId);
  } finally {
    await pool.close();
  }
});

test('job workers do not see the evaluation secret or variables named like credentials', async () => {
  const secrets = {
    RRL_EVAL_SECRET: 's1',
    OPENAI_API_KEY: 's2',
    HF_TOKEN: 's3',
    AWS_SECRET: 's4',
    DB_PASSWORD_FILE: 's5',
    my_api_key: 's6',
    API_KEY: 's7',
    SLURM_JWT: 's8',
  };
  const kept = { RRL_POOL_TEST_PLAIN: 'visible', TOKENIZER_PATH: '/tmp/tok' };
  const saved = Object.fromEntries(Object.keys({ ...secrets, ...kept }).map((k) => [k, process.env[k]]));
  Object.assign(process.env, secrets, kept);
  try {
    const pool = makePool(1);
    try {
      const outcome = await pool.run({ mode: 'env', names: [...Object.keys(secrets), ...Object.keys(kept), 'PATH'] });
      assert.ok(outcome.ok, JSON.stringify(outcome));
      const seen = outcome.value.value as Record<string, string | null>;
      for (const name of Object.keys(secrets)) assert.equal(seen[name], null, `${name} reached the worker`);
      assert.equal(seen.RRL_POOL_TEST_PLAIN, 'visible');
      assert.equal(seen.TOKENIZER_PATH, '/tmp/tok');
      assert.equal(seen.PATH, process.env.PATH ?? null);
    } finally {
      await pool.close();
    }
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});

test('wasmFailure tells WebAssembly memory failures and traps from ordinary errors, through causes', () => {
  const runtime = (message: string): Error => Object.assign(new Error(message), { name: 'RuntimeError' });
  for (const message of ['Aborted()', 'Aborted(OOM)', 'memory access out of bounds', 'Cannot enlarge memory arrays to size 4294967296 bytes']) {
    const r = wasmFailure(runtime(message));
    assert.equal(r?.kind, 'out-of-memory', message);
    assert.equal(r!.message, `ran out of WebAssembly (tensor) memory: RuntimeError: ${message}`);
  }
  assert.equal(wasmFailure(new Error('ppo step failed', { cause: runtime('Aborted()') }))?.kind, 'out-of-memory');
  assert.equal(wasmFailure(new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded'))?.kind, 'out-of-memory');
  assert.equal(wasmFailure(new Error('a\nmulti-line\nAborted()'))?.message.includes('\n'), false);
  assert.equal(wasmFailure(new Error('budget.envSteps (4) is smaller than environment.numEnvs (8)')), null);
  assert.equal(wasmFailure(Object.assign(new Error('loss became NaN'), { name: 'NaNError' })), null);
  assert.equal(wasmFailure(undefined), null);
});

test("a poisoned worker's report survives the shared buffer, cut to fit", () => {
  const report = new SharedArrayBuffer(REPORT_BYTES);
  assert.equal(readReport(report), null);
  writeReport(report, { kind: 'out-of-memory', message: 'ran out' });
  assert.deepEqual(readReport(report), { kind: 'out-of-memory', message: 'ran out' });
  const long = new SharedArrayBuffer(REPORT_BYTES);
  writeReport(long, { kind: 'worker-exit', message: 'x'.repeat(5000) });
  assert.deepEqual(readReport(long), { kind: 'worker-exit', message: 'x'.repeat(200) });
});

test('many tasks queued under one caller signal raise no listener-leak warning', async () => {
  const pool = makePool(2);
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const abort = new AbortController();
    const outcomes = await Promise.all(Array.from({ length: 24 }, (_, i) => pool.run({ mode: 'echo', value: i }, { signal: abort.signal })));
    assert.ok(outcomes.every((o) => o.ok));
    await delay(10); // warnings are emitted on a later tick
    assert.deepEqual(
      warnings.filter((w) => w === 'MaxListenersExceededWarning'),
      [],
    );
  } finally {
    process.off('warning', onWarning);
    await pool.close();
  }
});

import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { RewardService, type ServeConfig, type ServiceOptions } from './service.js';
import { type RunningServer, startServer } from './server.js';
import { JobResponse, JobsAccepted, RequestStatus, RewardsResponse } from './schemas.js';
import { LocalExecutor } from '../run/local.js';
import type { Executor } from '../run/executor.js';
import { Store } from '../store/store.js';
import { arsSpec } from '../testing/specs.js';
import { hostileValueArb, tokenSoupArb } from '../testing/arbitraries.js';
import { HARNESS_FAILURES, JOB_ATTEMPTS, unscorableReason } from '../outer/unscorable.js';

// The asynchronous job API: POST /v1/jobs answers at once, the rewards come by polling or events.
const task = 'cartpole-short';
const config: ServeConfig = { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } };
const executor = new LocalExecutor({ workers: 2 });
after(() => executor.close());

/** A tiny distinct job (ARS, 500 env steps). */
const tiny = (seed: number): string => JSON.stringify(arsSpec(task, 500, seed));

/** A service and its server on a fresh run directory. */
async function open(o: ServiceOptions & { keepaliveSeconds?: number; exec?: Executor } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-serve-jobs-'));
  const service = RewardService.open(dir, config, o.exec ?? executor, { maxQueue: 64, ...o });
  const server = await startServer(service, { port: 0, keepaliveSeconds: o.keepaliveSeconds });
  const close = async (): Promise<void> => {
    await server.close();
    await service.close();
  };
  return { dir, service, server, close };
}

const submit = (server: RunningServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${server.url}/v1/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** Reads a request's event stream to its end: the events in order, and the keepalive comments. */
async function events(server: RunningServer, request: number): Promise<{ events: { event: string; data: unknown }[]; keepalives: number }> {
  const res = await fetch(`${server.url}/v1/requests/${request}/events`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const text = await res.text();
  const out: { event: string; data: unknown }[] = [];
  let keepalives = 0;
  for (const block of text.split('\n\n')) {
    if (block.startsWith(': keepalive')) keepalives += 1;
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event && data !== undefined) out.push({ event, data: JSON.parse(data) });
  }
  return { events: out, keepalives };
}

/** A value as JSON text ('null' when it cannot be written: too deep, a BigInt). */
function jsonOrNull(v: unknown): string {
  try {
    return JSON.stringify(v) ?? 'null';
  } catch {
    return 'null';
  }
}

/** Polls GET /v1/requests/{id} until it is done. */
async function settled(server: RunningServer, request: number): Promise<import('zod').infer<typeof RequestStatus>> {
  for (;;) {
    const r = RequestStatus.parse(await (await fetch(`${server.url}/v1/requests/${request}`)).json());
    if (r.status === 'done') return r;
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

test('POST /v1/jobs answers 202 at once with job ids; polling and the event stream give the rewards that /v1/rewards gives', async () => {
  const s = await open({ keepaliveSeconds: 1 });
  try {
    const res = await submit(s.server, { task, completions: [tiny(1), 'no json here', tiny(2)] });
    assert.equal(res.status, 202);
    const accepted = JobsAccepted.parse(await res.json());
    assert.equal(res.headers.get('location'), `/v1/requests/${accepted.request}`);
    assert.equal(accepted.status, 'pending', 'answered before the jobs (the baseline alone trains for seconds)');
    assert.equal(accepted.jobs.length, 3);
    const pending = RequestStatus.parse(await (await fetch(`${s.server.url}/v1/requests/${accepted.request}`)).json());
    assert.equal(pending.answer, null);
    assert.deepEqual(pending.jobs, accepted.jobs);
    // The stream: one `job` event per completion, then `rewards`; keepalives while the baseline trains.
    const stream = await events(s.server, accepted.request);
    const kinds = stream.events.map((e) => e.event);
    assert.deepEqual(kinds, ['job', 'job', 'job', 'rewards']);
    assert.deepEqual(
      stream.events
        .slice(0, 3)
        .map((e) => JobResponse.parse(e.data).job)
        .sort(),
      [...accepted.jobs].sort(),
    );
    assert.ok(stream.keepalives >= 1, 'keepalive comments while the baseline trained');
    const answer = RewardsResponse.parse(stream.events[3].data);
    assert.equal(answer.request, accepted.request);
    assert.equal(answer.rewards[1], -1, 'an invalid completion is the job’s own failure');
    assert.equal(typeof answer.rewards[0], 'number');
    // Polling gives the same answer; a stream opened after the end replays it and ends.
    assert.deepEqual((await settled(s.server, accepted.request)).answer, answer);
    assert.deepEqual((await events(s.server, accepted.request)).events.at(-1), { event: 'rewards', data: answer });
    // Each job carries its reward once settled.
    const job = JobResponse.parse(await (await fetch(`${s.server.url}/v1/jobs/${accepted.jobs[0]}`)).json());
    assert.equal(job.reward, answer.rewards[0]);
    assert.equal(job.unscorable, null);
    // Unknown ids and methods.
    assert.equal((await fetch(`${s.server.url}/v1/requests/999`)).status, 404);
    assert.equal((await fetch(`${s.server.url}/v1/requests/999/events`)).status, 404);
    assert.equal((await fetch(`${s.server.url}/v1/requests/x`)).status, 400);
    assert.equal((await fetch(`${s.server.url}/v1/jobs`)).status, 405);
  } finally {
    await s.close();
  }
});

test('POST /v1/jobs is idempotent: the same key is the same request and trains nothing again; /v1/rewards with it gets the answer', async () => {
  const s = await open();
  try {
    const body = { task, completions: [tiny(3), tiny(4)] };
    const first = JobsAccepted.parse(await (await submit(s.server, body, { 'idempotency-key': 'group-1' })).json());
    const again = JobsAccepted.parse(await (await submit(s.server, body, { 'idempotency-key': 'group-1' })).json());
    assert.equal(again.request, first.request);
    assert.equal(again.replayed, true);
    assert.deepEqual(again.jobs, first.jobs);
    const other = await submit(s.server, { task, completions: [tiny(5)] }, { 'idempotency-key': 'group-1' });
    assert.equal(other.status, 422, 'a key reused for another group is refused');
    const blocking = RewardsResponse.parse(
      await (
        await fetch(`${s.server.url}/v1/rewards`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...body, idempotencyKey: 'group-1' }),
        })
      ).json(),
    );
    assert.equal(blocking.request, first.request);
    assert.equal(blocking.replayed, true);
    const done = await settled(s.server, first.request);
    assert.deepEqual(done.answer?.rewards, blocking.rewards);
    const afterwards = JobsAccepted.parse(await (await submit(s.server, body, { 'idempotency-key': 'group-1' })).json());
    assert.equal(afterwards.status, 'done');
    const store = new Store(s.dir);
    try {
      assert.equal(store.jobs(store.getRun()!.id, { kind: 'proposal' }).length, 2, 'two completions, two jobs, whatever the retries');
    } finally {
      store.close();
    }
  } finally {
    await s.close();
  }
});

/**
 * Fault injection at the executor's boundary: jobs of ARS specs whose seed is in `lost` end as a
 * lost worker (`worker-exit`) on their first `times` attempts; every other job runs for real.
 */
function losingWorkers(lost: Set<number>, times: number): Executor {
  const attempts = new Map<number, number>();
  return {
    name: 'local-losing-workers',
    slots: executor.slots,
    async execute(req, options) {
      const seed = (req.spec as { seed?: number }).seed ?? 0;
      const n = (attempts.get(seed) ?? 0) + 1;
      attempts.set(seed, n);
      if (lost.has(seed) && n <= times) return { status: 'failed', kind: 'worker-exit', error: 'the worker thread exited (injected)', cost: {} };
      return executor.execute(req, options);
    },
    cancelAll: (reason) => executor.cancelAll(reason),
    close: async () => {},
  };
}

test('a job the harness lost is tried again; lost on every attempt its reward is null with the reason, never −1, and it takes no advantage', async () => {
  const s = await open({ exec: losingWorkers(new Set([11, 12]), JOB_ATTEMPTS - 1) });
  try {
    // Seed 11 and 12 are lost once (JOB_ATTEMPTS − 1 times): the second attempt scores them.
    const once = await s.service.rewards(task, [tiny(11), tiny(12)]);
    assert.ok(once.rewards.every((r) => typeof r === 'number'));
    assert.ok(once.results.every((r) => r.status === 'succeeded'));
  } finally {
    await s.close();
  }
  const always = await open({ exec: losingWorkers(new Set([21]), Number.POSITIVE_INFINITY) });
  try {
    const accepted = JobsAccepted.parse(await (await submit(always.server, { task, completions: [tiny(21), tiny(22), 'not a job'] })).json());
    const answer = (await settled(always.server, accepted.request)).answer!;
    assert.equal(answer.rewards[0], null, 'lost on every attempt: unscorable');
    assert.match(answer.results[0].reason!, /^unscorable: worker-exit: the worker thread exited \(injected\)/);
    assert.equal(typeof answer.rewards[1], 'number');
    assert.equal(answer.rewards[2], -1, 'an invalid completion still costs');
    const job = JobResponse.parse(await (await fetch(`${always.server.url}/v1/jobs/${accepted.jobs[0]}`)).json());
    assert.equal(job.reward, null);
    assert.match(job.unscorable!, /^unscorable: worker-exit/);
    const store = new Store(always.dir);
    try {
      const paid = store.db.prepare('SELECT job_id AS job FROM rewards').all() as { job: number }[];
      assert.deepEqual(
        paid.map((p) => p.job).sort(),
        accepted.jobs.slice(1).sort(),
        'the unscorable job has no reward row: the group’s advantages are over the others',
      );
    } finally {
      store.close();
    }
  } finally {
    await always.close();
  }
});

test('property: a reward is null exactly when the job failed the harness’s way (or its task has no reference); a job’s own failure is never null', () => {
  const kinds = fc.constantFrom(...HARNESS_FAILURES, 'error', 'timeout', 'out-of-memory', 'nan', 'invalid', 'job-error', '');
  const status = fc.constantFrom('succeeded', 'failed', 'invalid', 'pending');
  fc.assert(
    fc.property(status, kinds, fc.option(fc.string(), { nil: null }), fc.option(fc.string(), { nil: null }), (st, kind, error, missing) => {
      const why = unscorableReason({ status: st, failureKind: kind || null, error }, missing);
      const harness = st === 'failed' && HARNESS_FAILURES.has(kind);
      const noReference = missing !== null && st === 'succeeded';
      assert.equal(why !== null, harness || noReference);
      if (why !== null) assert.match(why, /^unscorable: /);
    }),
  );
});

test('property: no completion, however hostile, gets a null reward: invalid or failed by its own doing is −1', async () => {
  const s = await open();
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(tokenSoupArb, fc.string(), hostileValueArb.map(jsonOrNull)), { minLength: 1, maxLength: 6 }), async (completions) => {
        const res = await submit(s.server, { task, completions });
        if (res.status !== 202) return; // refused whole (a body limit): nothing was rewarded
        const accepted = JobsAccepted.parse(await res.json());
        const answer = (await settled(s.server, accepted.request)).answer!;
        assert.equal(answer.rewards.length, completions.length);
        for (const [i, r] of answer.rewards.entries()) {
          assert.notEqual(r, null, `completion ${i} got a null reward: ${answer.results[i].reason}`);
          if (answer.results[i].status !== 'succeeded') assert.equal(r, -1);
        }
      }),
      { numRuns: 25 },
    );
  } finally {
    await s.close();
  }
});

test('a stopping server ends the event stream with `interrupted` and keeps the request pending', async () => {
  const s = await open();
  const accepted = JobsAccepted.parse(await (await submit(s.server, { task, completions: [JSON.stringify(arsSpec(task, 5000, 31))] })).json());
  const stream = events(s.server, accepted.request);
  await new Promise((ok) => setTimeout(ok, 200));
  s.service.stop();
  const { events: got } = await stream;
  assert.equal(got.at(-1)?.event, 'interrupted');
  assert.match((got.at(-1)?.data as { error: string }).error, /--resume/);
  await s.close();
  const store = new Store(s.dir);
  try {
    assert.equal(store.request(store.getRun()!.id, accepted.request)?.status, 'pending', 'kept for --resume');
  } finally {
    store.close();
  }
});

test('1,000 queued jobs: all accepted at once, the server answers meanwhile, every one is rewarded', async () => {
  const s = await open({ maxQueue: 1024 });
  try {
    const group = 8;
    const requests = 125;
    // 25 clients at once (the server keeps at most 64 connections), each posting its share of the groups.
    const accepted: import('zod').infer<typeof JobsAccepted>[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 25 }, async () => {
        for (let r = next++; r < requests; r = next++) {
          const res = await submit(s.server, { task, completions: Array.from({ length: group }, (_, i) => tiny(1000 + r * group + i)) });
          assert.equal(res.status, 202);
          accepted.push(JobsAccepted.parse(await res.json()));
        }
      }),
    );
    assert.equal(new Set(accepted.flatMap((a) => a.jobs)).size, requests * group);
    assert.ok(s.service.queued > 0, 'jobs are queued');
    const tasks = await fetch(`${s.server.url}/v1/tasks`);
    assert.equal(tasks.status, 200, 'other routes answer while 1,000 jobs wait');
    const answers = [];
    for (const a of accepted) answers.push(await settled(s.server, a.request));
    const rewards = answers.flatMap((a) => a.answer!.rewards);
    assert.equal(rewards.length, requests * group);
    assert.ok(
      rewards.every((r) => typeof r === 'number'),
      'every job rewarded',
    );
  } finally {
    await s.close();
  }
});

test('a request the harness fails on for a bug of its own ends its event stream with `error` and stays pending, never hanging', async () => {
  const broken: Executor = {
    name: 'throwing',
    slots: 1,
    execute: () => Promise.reject(new Error('a bug in the executor (injected)')),
    cancelAll: () => {},
    close: async () => {},
  };
  const s = await open({ exec: broken });
  try {
    const accepted = JobsAccepted.parse(await (await submit(s.server, { task, completions: [tiny(41)] })).json());
    const { events: got } = await events(s.server, accepted.request);
    assert.equal(got.at(-1)?.event, 'error');
    assert.match((got.at(-1)?.data as { error: string }).error, /^the harness failed on request \d+: a bug in the executor \(injected\)/);
    assert.equal(RequestStatus.parse(await (await fetch(`${s.server.url}/v1/requests/${accepted.request}`)).json()).status, 'pending');
  } finally {
    await s.close();
  }
});

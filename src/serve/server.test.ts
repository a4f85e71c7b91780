import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RewardService, type ServeConfig } from './service.js';
import { type RunningServer, startServer } from './server.js';
import { requestsParsing } from './intake.js';
import { JobResponse, PromptResponse, RewardsResponse, TaskRow } from './schemas.js';
import { LocalExecutor } from '../run/local.js';
import { Store } from '../store/store.js';
import { arsSpec } from '../testing/specs.js';
import { SPEC_BOUNDS } from '../spec/bounds.js';

const task = 'cartpole-short';
const config: ServeConfig = { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } };
const dir = mkdtempSync(join(tmpdir(), 'rrl-serve-'));
const executor = new LocalExecutor({ workers: 2 });
let service: RewardService;
let server: RunningServer;

before(async () => {
  service = RewardService.open(dir, config, executor, { maxQueue: 64 });
  server = await startServer(service, { port: 0 });
});
after(async () => {
  await server.close();
  await service.close();
  await executor.close();
});

const post = (body: unknown, raw = false): Promise<Response> =>
  fetch(`${server.url}/v1/rewards`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw ? (body as string) : JSON.stringify(body) });
const fenced = (spec: unknown): string => `I will use a linear policy.\n\`\`\`json\n${JSON.stringify(spec, null, 2)}\n\`\`\``;

test('tasks, prompt, rewards and jobs answer in the shapes of the OpenAPI document', async () => {
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    openapi: string;
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    components: { schemas: Record<string, unknown> };
  };
  assert.equal(doc.openapi, '3.1.0');
  assert.deepEqual(Object.keys(doc.paths).sort(), [
    '/openapi.json',
    '/v1/episodes',
    '/v1/episodes/{id}',
    '/v1/episodes/{id}/close',
    '/v1/episodes/{id}/submissions',
    '/v1/jobs',
    '/v1/jobs/{id}',
    '/v1/requests/{id}',
    '/v1/requests/{id}/events',
    '/v1/rewards',
    '/v1/tasks',
    '/v1/tasks/{id}/confirmations',
    '/v1/tasks/{id}/prompt',
    '/v1/tasks/{id}/schema',
    '/v1/tasks/{id}/space',
  ]);
  // Every reference points at a schema the document defines.
  const refs = JSON.stringify(doc).match(/"\$ref":"[^"]*"/g) ?? [];
  assert.ok(refs.length > 5);
  for (const r of refs) assert.ok(doc.components.schemas[r.slice(8, -1).replace('#/components/schemas/', '')], r);

  const tasks = TaskRow.array().parse(await (await fetch(`${server.url}/v1/tasks`)).json());
  assert.ok(tasks.some((t) => t.id === task));
  const full = PromptResponse.parse(await (await fetch(`${server.url}/v1/tasks/${task}/prompt`)).json());
  const compact = PromptResponse.parse(await (await fetch(`${server.url}/v1/tasks/${task}/prompt?form=compact`)).json());
  assert.equal(full.messages[0].role, 'system');
  assert.match(full.messages[1].content, /Job spec fields/);
  assert.ok(compact.messages[1].content.length < full.messages[1].content.length / 2, 'the compact form is short');
  assert.match(compact.messages[1].content, /"task":"cartpole-short"/);
  assert.equal(full.example, null);
  assert.equal(compact.example?.task, task, 'the compact form names the example spec it shows');
  assert.ok(compact.messages[1].content.includes(JSON.stringify(compact.example)));
  assert.equal((await fetch(`${server.url}/v1/tasks/nope/prompt`)).status, 404);

  const res = await post({
    task,
    completions: [fenced(arsSpec(task, 5000, 1)), 'I do not know.', JSON.stringify({ ...arsSpec(task), reward: { expression: 'r + foo' } })],
  });
  assert.equal(res.status, 200);
  const body = RewardsResponse.parse(await res.json());
  assert.equal(body.rewards.length, 3);
  assert.equal(body.results[0].status, 'succeeded');
  assert.ok(body.results[0].score && body.results[0].score.normalized > 0, 'ARS learns CartPole');
  assert.ok(body.rewards[0]! > -1);
  assert.deepEqual(
    body.results.slice(1).map((r) => r.status),
    ['invalid', 'invalid'],
  );
  assert.deepEqual(body.rewards.slice(1), [-1, -1]);
  assert.match(body.results[1].reason ?? '', /no JSON object/);
  assert.match(body.results[2].reason ?? '', /reward\.expression.*foo/);

  const job = JobResponse.parse(await (await fetch(`${server.url}/v1/jobs/${body.results[0].job}`)).json());
  assert.equal(job.reward, body.rewards[0]);
  assert.equal(job.status, 'succeeded');
  assert.equal((await fetch(`${server.url}/v1/jobs/999999`)).status, 404);

  // The run's store holds the request, its jobs, their scores and rewards.
  const store = new Store(dir);
  try {
    const run = store.getRun()!;
    const req = store.requests(run.id).at(-1)!;
    assert.equal(req.status, 'done');
    assert.deepEqual(req.response, body);
    const rows = store.jobs(run.id, { round: req.id, kind: 'proposal' });
    assert.deepEqual(
      rows.map((r) => r.reward),
      body.rewards,
    );
    assert.ok(
      store.jobs(run.id, { kind: 'baseline' }).every((r) => r.task === task && r.status !== 'pending'),
      'the baseline trained once',
    );
  } finally {
    store.close();
  }
});

test('concurrent requests are all answered; an identical spec in flight twice trains once', async () => {
  const same = JSON.stringify(arsSpec(task, 4000, 11));
  const answers = await Promise.all(
    [21, 22, 23].map(async (seed) => {
      const res = await post({ task, completions: [same, JSON.stringify(arsSpec(task, 4000, seed))] });
      assert.equal(res.status, 200);
      return RewardsResponse.parse(await res.json());
    }),
  );
  const ids = answers.flatMap((a) => a.results.map((r) => r.job));
  assert.equal(new Set(ids).size, 6, 'every completion is its own job');
  for (const a of answers) assert.ok(a.results.every((r) => r.status === 'succeeded'));
  const sameJobs = await Promise.all(answers.map(async (a) => JobResponse.parse(await (await fetch(`${server.url}/v1/jobs/${a.results[0].job}`)).json())));
  assert.equal(sameJobs.filter((j) => j.cached).length, 2, 'two of the three identical specs reuse the first one');
  assert.equal(new Set(sameJobs.map((j) => j.score?.normalized)).size, 1);
});

test('hostile bodies are 4xx with a one-line error; hostile completions are invalid with the penalty', async () => {
  const cases: [string, string | null, number][] = [
    ['not JSON', '{"task": ', 400],
    ['wrong types', JSON.stringify({ task: 5, completions: 'x' }), 400],
    ['unknown field', JSON.stringify({ task, completions: ['x'], extra: 1 }), 400],
    ['no completions', JSON.stringify({ task, completions: [] }), 400],
    ['unknown task', JSON.stringify({ task: 'no-such-task', completions: ['x'] }), 404],
    ['deeply nested', `{"task":${'['.repeat(200_000)}${']'.repeat(200_000)},"completions":["x"]}`, 400],
    ['huge', JSON.stringify({ task, completions: ['x'.repeat(9 << 20)] }), 413],
    ['a JSON array', '[1,2,3]', 400],
  ];
  for (const [name, body, status] of cases) {
    const res = await post(body, true);
    assert.equal(res.status, status, name);
    const answer = (await res.json()) as { error: string };
    assert.equal(typeof answer.error, 'string', name);
    assert.doesNotMatch(answer.error, /\n/, name);
  }
  assert.equal((await fetch(`${server.url}/v1/rewards`)).status, 405);
  assert.equal((await fetch(`${server.url}/v1/rewards`, { method: 'HEAD' })).status, 405);
  assert.equal((await fetch(`${server.url}/v1/tasks`, { method: 'HEAD' })).status, 404, 'the API has no HEAD');
  assert.equal((await fetch(`${server.url}/v1/nowhere`)).status, 404);
  assert.equal((await fetch(`${server.url}/v1/jobs/-1`)).status, 400);

  const deep = `${'{"a":'.repeat(SPEC_BOUNDS.maxDepth + 2)}1${'}'.repeat(SPEC_BOUNDS.maxDepth + 2)}`;
  const completions = [
    deep,
    '{"__proto__": {"polluted": true}, "task": "cartpole-short"}',
    'x'.repeat(100_000),
    '{'.repeat(100_000),
    `<think>${'{"a": ['.repeat(1000)}`,
    JSON.stringify({ ...arsSpec(task), budget: { envSteps: 1e12 } }),
    '\u0000\uffff\ud800',
  ];
  const res = await post({ task, completions });
  assert.equal(res.status, 200);
  const body = RewardsResponse.parse(await res.json());
  assert.deepEqual(
    body.results.map((r) => r.status),
    completions.map(() => 'invalid'),
  );
  assert.deepEqual(
    body.rewards,
    completions.map(() => -1),
  );
  for (const r of body.results) assert.doesNotMatch(r.reason ?? '', /\n/);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('a full queue answers 429 with Retry-After; shutting down answers 503 and keeps the request', async () => {
  const dir2 = mkdtempSync(join(tmpdir(), 'rrl-serve-queue-'));
  const ex = new LocalExecutor({ workers: 1 });
  const small = RewardService.open(dir2, config, ex, { maxQueue: 2 });
  const srv = await startServer(small, { port: 0 });
  try {
    const first = fetch(`${srv.url}/v1/rewards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task, completions: [JSON.stringify(arsSpec(task, 5000, 31)), JSON.stringify(arsSpec(task, 5000, 32))] }),
    });
    while (small.queued < 2) await new Promise((r) => setTimeout(r, 20));
    const refused = await fetch(`${srv.url}/v1/rewards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task, completions: ['{}'] }),
    });
    assert.equal(refused.status, 429);
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.match(((await refused.json()) as { error: string }).error, /queue is full/);
    await small.close();
    const res = await first;
    assert.equal(res.status, 503);
    assert.match(((await res.json()) as { error: string }).error, /--resume/);
  } finally {
    await srv.close();
    await ex.close();
  }
  const store = new Store(dir2);
  try {
    assert.deepEqual(
      store.requests(store.getRun()!.id).map((r) => r.status),
      ['pending'],
    );
  } finally {
    store.close();
  }
});

test('a token is required beyond loopback, and once given, on every request', async () => {
  assert.throws(() => startServer(service, { host: '0.0.0.0', port: 0 }), /bearer token/);
  const srv = await startServer(service, { port: 0, token: 's3cret' });
  try {
    assert.equal((await fetch(`${srv.url}/v1/tasks`)).status, 401);
    assert.equal((await fetch(`${srv.url}/openapi.json`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    const bad = await fetch(`${srv.url}/v1/rewards`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', authorization: 'Basic s3cret' },
    });
    assert.equal(bad.status, 401);
    assert.equal((await fetch(`${srv.url}/v1/tasks`, { headers: { authorization: 'Bearer s3cret' } })).status, 200);
  } finally {
    await srv.close();
  }
});

/** A request with raw headers (Host included) over a real socket; resolves status, headers and body. */
function raw(
  base: string,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: o.method ?? 'GET', headers: o.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The one-line error of a JSON answer. */
function oneLineError(body: string): string {
  const error = (JSON.parse(body) as { error: string }).error;
  assert.equal(typeof error, 'string');
  assert.doesNotMatch(error, /\n/);
  return error;
}

/** Everything a socket receives until the server closes it (the bytes written first, if any). */
function untilClosed(port: number, write?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => write && socket.write(write));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (text += c));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
}

const requestCount = (): number => {
  const store = new Store(dir);
  try {
    return store.requests(store.getRun()!.id).length;
  } finally {
    store.close();
  }
};

test('without a token only a loopback Host with the port is served; an Origin must be the server’s own', async () => {
  const port = server.port;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
    assert.equal((await raw(server.url, '/v1/tasks', { headers: { host } })).status, 200, host);
  }
  for (const host of [`evil.example:${port}`, `127.0.0.1:${port + 1}`, '127.0.0.1', `127.0.0.1.evil.example:${port}`]) {
    const r = await raw(server.url, '/v1/tasks', { headers: { host } });
    assert.equal(r.status, 421, host);
    assert.match(oneLineError(r.body), /is not this server/, host);
  }
  // A page of another origin: its POST (a no-cors fetch, a form) is refused before anything runs.
  const before = requestCount();
  const body = JSON.stringify({ task, completions: [JSON.stringify(arsSpec(task, 500, 5))] });
  for (const origin of ['http://evil.example', `http://127.0.0.1:${port + 1}`, 'null', `http://localhost:${port}`]) {
    const r = await raw(server.url, '/v1/rewards', { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body });
    assert.equal(r.status, 403, origin);
    assert.match(oneLineError(r.body), /another origin/, origin);
  }
  assert.equal(requestCount(), before, 'no request was recorded');
  assert.equal((await raw(server.url, '/v1/tasks', { headers: { origin: `http://127.0.0.1:${port}` } })).status, 200);

  // With a token, any Host is served (the token is what keeps others out); a foreign Origin still is not.
  const srv = await startServer(service, { port: 0, token: 's3cret' });
  try {
    const auth = { authorization: 'Bearer s3cret' };
    assert.equal((await raw(srv.url, '/v1/tasks', { headers: { ...auth, host: `box.example:${srv.port}` } })).status, 200);
    assert.equal(
      (await raw(srv.url, '/v1/tasks', { headers: { ...auth, host: `box.example:${srv.port}`, origin: `http://box.example:${srv.port}` } })).status,
      200,
    );
    assert.equal((await raw(srv.url, '/v1/tasks', { headers: { ...auth, host: `box.example:${srv.port}`, origin: 'http://evil.example' } })).status, 403);
  } finally {
    await srv.close();
  }
});

test('a POST body must be application/json: text/plain, a form or no type is 415', async () => {
  const body = JSON.stringify({ task, completions: ['x'] });
  for (const type of [
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=latin1',
    'application/jsonx',
    null,
  ]) {
    const r = await raw(server.url, '/v1/rewards', { method: 'POST', headers: type ? { 'content-type': type } : {}, body });
    assert.equal(r.status, 415, String(type));
    assert.match(oneLineError(r.body), /must be application\/json/);
  }
  const ok = await raw(server.url, '/v1/rewards', {
    method: 'POST',
    headers: { 'content-type': 'Application/JSON; charset="UTF-8"' },
    body: JSON.stringify({ task: 'no-such-task', completions: ['x'] }),
  });
  assert.equal(ok.status, 404, 'past the type check');
});

test('a malformed percent-encoding in a path is 400 with one line', async () => {
  for (const path of ['/v1/tasks/%ZZ/prompt', '/v1/tasks/%E0%A4%A/prompt', '/v1/jobs/%', '/v1/%c0%af']) {
    const r = await raw(server.url, path);
    assert.equal(r.status, 400, path);
    assert.match(oneLineError(r.body), /malformed percent-encoding/, path);
  }
});

test('a half-sent body is answered 408 and closed after the body timeout; a long wait for jobs is not cut', async () => {
  const srv = await startServer(service, { port: 0, bodyTimeoutMs: 300 });
  try {
    const head = `POST /v1/rewards HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\ncontent-type: application/json\r\ncontent-length: ${8 << 20}\r\n\r\n{"task":"`;
    const answer = await untilClosed(srv.port, head);
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(oneLineError(answer.slice(answer.indexOf('\r\n\r\n') + 4)), /did not arrive whole within 300 ms/);
    // Headers that never end are cut off the same way.
    assert.match(await untilClosed(srv.port, `GET /v1/tasks HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n`), /^HTTP\/1\.1 408 /);
    // A request whose body arrived waits for its jobs (seconds, past the body timeout).
    const res = await fetch(`${srv.url}/v1/rewards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task, completions: [JSON.stringify(arsSpec(task, 3000, 77))] }),
    });
    assert.equal(res.status, 200);
    assert.equal(RewardsResponse.parse(await res.json()).results[0].status, 'succeeded');
  } finally {
    await srv.close();
  }
});

test('connections past the cap are answered 503 and closed, and none of their requests reaches a route', async () => {
  const srv = await startServer(service, { port: 0, maxConnections: 2 });
  const held = [connect(srv.port, '127.0.0.1'), connect(srv.port, '127.0.0.1')];
  try {
    await Promise.all(held.map((s) => once(s, 'connect')));
    const before = requestCount();
    const body = JSON.stringify({ task, completions: [JSON.stringify(arsSpec(task, 500, 6))] });
    const answer = await untilClosed(
      srv.port,
      `POST /v1/rewards HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    assert.match(answer, /^HTTP\/1\.1 503 /);
    assert.match(oneLineError(answer.slice(answer.indexOf('\r\n\r\n') + 4)), /too many connections: this server keeps at most 2 open/);
    assert.equal(requestCount(), before);
    // Once one is closed there is room again.
    held.pop()!.destroy();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = await raw(srv.url, '/v1/tasks', { headers: { connection: 'close' } }).then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status, 200);
  } finally {
    for (const s of held) s.destroy();
    await srv.close();
  }
});

test('a flood of completions is parsed off the event loop: other clients are answered while it is parsed', async () => {
  const dir2 = mkdtempSync(join(tmpdir(), 'rrl-serve-flood-'));
  const ex = new LocalExecutor({ workers: 1 });
  const big = RewardService.open(dir2, config, ex, { maxQueue: 1000 });
  const srv = await startServer(big, { port: 0 });
  try {
    // Each completion makes the parser try 32 unclosed objects, each to the end of the text.
    const completions = Array.from({ length: 256 }, (_, i) => `${'{'.repeat(32)}${String(i).padEnd(32_000, 'x')}`);
    const flood = fetch(`${srv.url}/v1/rewards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task, completions }),
    });
    while (requestsParsing() === 0) await new Promise((r) => setImmediate(r));
    let answeredWhileParsing = 0;
    while (requestsParsing() > 0) {
      const r = await raw(srv.url, '/v1/tasks');
      assert.equal(r.status, 200);
      if (requestsParsing() > 0) answeredWhileParsing += 1;
    }
    assert.ok(answeredWhileParsing > 0, 'a GET was answered while the flood was parsed');
    const res = await flood;
    assert.equal(res.status, 200);
    const body = RewardsResponse.parse(await res.json());
    assert.deepEqual(new Set(body.results.map((r) => r.status)), new Set(['invalid']));
    assert.match(body.results[0].reason ?? '', /no complete JSON object/);
  } finally {
    await srv.close();
    await big.close();
    await ex.close();
  }
});

test('invalid completions count against a byte budget: a flood gets 429 with Retry-After; their traces are kept cut to 1 KiB', async () => {
  const dir2 = mkdtempSync(join(tmpdir(), 'rrl-serve-budget-'));
  const ex = new LocalExecutor({ workers: 1 });
  const small = RewardService.open(dir2, config, ex, { maxQueue: 1000, completionBytes: 300_000, completionWindowMs: 60_000 });
  const srv = await startServer(small, { port: 0 });
  const post2 = (completions: string[]): Promise<Response> =>
    fetch(`${srv.url}/v1/rewards`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ task, completions }) });
  try {
    const valid = fenced(arsSpec(task, 500, 8));
    const junk = ['x'.repeat(64_000), `{"algorithm": ${'"y'.repeat(30_000)}`, JSON.stringify({ ...arsSpec(task), notes: 'z'.repeat(60_000) })];
    const first = await post2([valid, ...junk]);
    assert.equal(first.status, 200);
    const answer = RewardsResponse.parse(await first.json());
    assert.deepEqual(
      answer.results.map((r) => r.status),
      ['succeeded', 'invalid', 'invalid', 'invalid'],
    );
    // The budget is spent (invalid bytes too): the next flood is refused before it is parsed.
    const refused = await post2(junk);
    assert.equal(refused.status, 429);
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.match(oneLineError(await refused.text()), /too many completion bytes: \d+ of 300000 taken in the last 60 s/);

    const store = new Store(dir2);
    try {
      const run = store.getRun()!;
      assert.equal(store.requests(run.id).length, 1, 'the refused flood left no request');
      const rows = store.jobs(run.id, { kind: 'proposal' });
      const traces = rows.map((r) => (r.trace as { completion: string }).completion);
      assert.equal(traces[0], valid, 'a valid completion is kept whole');
      for (const [i, text] of junk.entries()) {
        assert.equal(traces[i + 1], `${text.slice(0, 1024)}…[${text.length - 1024} more characters not kept]`);
      }
      assert.match(rows[3].error ?? '', /notes/, 'the spec that fails validation is invalid with the reason');
    } finally {
      store.close();
    }
  } finally {
    await srv.close();
    await small.close();
    await ex.close();
  }
});

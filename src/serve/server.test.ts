import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RewardService, type ServeConfig } from './service.js';
import { type RunningServer, startServer } from './server.js';
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
  assert.deepEqual(Object.keys(doc.paths).sort(), ['/openapi.json', '/v1/jobs/{id}', '/v1/rewards', '/v1/tasks', '/v1/tasks/{id}/prompt']);
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

  const res = await post({ task, completions: [fenced(arsSpec(task, 5000, 1)), 'I do not know.', JSON.stringify({ ...arsSpec(task), reward: { expression: 'r + foo' } })] });
  assert.equal(res.status, 200);
  const body = RewardsResponse.parse(await res.json());
  assert.equal(body.rewards.length, 3);
  assert.equal(body.results[0].status, 'succeeded');
  assert.ok(body.results[0].score && body.results[0].score.normalized > 0, 'ARS learns CartPole');
  assert.ok(body.rewards[0] > -1);
  assert.deepEqual(body.results.slice(1).map((r) => r.status), ['invalid', 'invalid']);
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
    const rows = store.jobs(run.id, { iteration: req.id, kind: 'proposal' });
    assert.deepEqual(rows.map((r) => r.reward), body.rewards);
    assert.ok(store.jobs(run.id, { kind: 'baseline' }).every((r) => r.task === task && r.status !== 'pending'), 'the baseline trained once');
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
  assert.equal((await fetch(`${server.url}/v1/nowhere`)).status, 404);
  assert.equal((await fetch(`${server.url}/v1/jobs/-1`)).status, 400);

  const deep = `${'{"a":'.repeat(SPEC_BOUNDS.maxDepth + 2)}1${'}'.repeat(SPEC_BOUNDS.maxDepth + 2)}`;
  const completions = [
    deep,
    '{"__proto__": {"polluted": true}, "task": "cartpole-short"}',
    'x'.repeat(100_000),
    '{'.repeat(100_000),
    '<think>' + '{"a": ['.repeat(1000),
    JSON.stringify({ ...arsSpec(task), budget: { envSteps: 1e12 } }),
    '\u0000\uffff\ud800',
  ];
  const res = await post({ task, completions });
  assert.equal(res.status, 200);
  const body = RewardsResponse.parse(await res.json());
  assert.deepEqual(body.results.map((r) => r.status), completions.map(() => 'invalid'));
  assert.deepEqual(body.rewards, completions.map(() => -1));
  for (const r of body.results) assert.doesNotMatch(r.reason ?? '', /\n/);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('a full queue answers 429 with Retry-After; shutting down answers 503 and keeps the request', async () => {
  const dir2 = mkdtempSync(join(tmpdir(), 'rrl-serve-queue-'));
  const ex = new LocalExecutor({ workers: 1 });
  const small = RewardService.open(dir2, config, ex, { maxQueue: 2 });
  const srv = await startServer(small, { port: 0 });
  try {
    const first = fetch(`${srv.url}/v1/rewards`, { method: 'POST', body: JSON.stringify({ task, completions: [JSON.stringify(arsSpec(task, 5000, 31)), JSON.stringify(arsSpec(task, 5000, 32))] }) });
    while (small.queued < 2) await new Promise((r) => setTimeout(r, 20));
    const refused = await fetch(`${srv.url}/v1/rewards`, { method: 'POST', body: JSON.stringify({ task, completions: ['{}'] }) });
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
    assert.deepEqual(store.requests(store.getRun()!.id).map((r) => r.status), ['pending']);
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
    const bad = await fetch(`${srv.url}/v1/rewards`, { method: 'POST', body: '{}', headers: { authorization: 'Basic s3cret' } });
    assert.equal(bad.status, 401);
    assert.equal((await fetch(`${srv.url}/v1/tasks`, { headers: { authorization: 'Bearer s3cret' } })).status, 200);
  } finally {
    await srv.close();
  }
});

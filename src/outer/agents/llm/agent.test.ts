import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../store/store.js';
import { getPublicTask } from '../../../tasks/briefs.js';
import { grammarSchema } from '../../../spec/grammar-schema.js';
import { Rng } from '../../../util/rng.js';
import { arsSpec } from '../../../testing/specs.js';
import { FakeLlmServer, fakeLogprob, fakeTokens, type FakeScript } from '../../../testing/fake-llm-server.js';
import { LlmAgent } from './agent.js';
import { contextOverflow } from './context-probe.js';
import type { LlmOptions } from './options.js';
import { checkReply } from './reply.js';
import { refusesFormat } from './response-format.js';
import { backoffDelay, retryAfterMs } from './retry.js';
import { serverRoot } from './server.js';
import type { LlmTrace } from './trace.js';
import { compactExample } from '../prompt.js';
import type { Proposal, ProposalContext } from '../types.js';

const MODEL = 'Qwen/Qwen3.6-35B-A3B';
const cartpole = getPublicTask('cartpole-balance').brief;
const good = JSON.stringify(arsSpec('cartpole-balance', 5000, 3));

/** Starts a fake server with `script`, runs `fn` with an agent pointed at it, closes the server. */
async function withAgent(script: FakeScript, options: Partial<LlmOptions>, fn: (agent: LlmAgent, server: FakeLlmServer) => Promise<void>): Promise<void> {
  const server = new FakeLlmServer({ model: MODEL, script });
  const baseUrl = await server.start();
  try {
    await fn(new LlmAgent({ baseUrl, model: MODEL, backoffMs: 1, ...options }), server);
  } finally {
    await server.close();
  }
}

const ctx = (iteration = 0, history: ProposalContext['history'] = []): ProposalContext => ({ rng: new Rng(1), iteration, history });
const traceOf = (p: Proposal): LlmTrace => p.trace as LlmTrace;

test('a good reply becomes the spec; the request asks for the JSON Schema, logprobs and the sampling settings', async () => {
  await withAgent([{ content: good }], { temperature: 0.7, topP: 0.9, maxTokens: 4096 }, async (agent, server) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected, undefined);
    assert.deepEqual(p.spec, JSON.parse(good));
    const [req] = server.chatRequests();
    assert.equal(req.model, MODEL);
    assert.equal(req.response_format?.type, 'json_schema');
    assert.equal(req.response_format?.json_schema?.name, 'job_spec');
    assert.deepEqual(req.response_format?.json_schema?.schema, grammarSchema(cartpole));
    assert.equal(req.logprobs, true);
    assert.equal(req.n, 1);
    assert.equal(req.temperature, 0.7);
    assert.equal(req.top_p, 0.9);
    assert.equal(req.max_tokens, 4096);
    assert.deepEqual(
      req.messages.map((m) => m.role),
      ['system', 'user'],
    );
    assert.match(req.messages[1].content, /Write the job spec for task "cartpole-balance"/);
    const t = traceOf(p);
    assert.equal(t.kind, 'llm');
    assert.equal(t.model, MODEL);
    assert.equal(t.adapter, null);
    assert.deepEqual(t.messages, req.messages);
    assert.equal(t.completion, good);
    assert.equal(t.repaired, false);
    assert.equal(t.error, null);
    // The stored log-probabilities are the server's, token by token.
    assert.deepEqual(
      t.logprobs,
      fakeTokens(good).map((token, i) => ({ token, logprob: fakeLogprob(token, i) })),
    );
    assert.deepEqual(t.turns[0].attempts, [{ attempt: 1, ok: true, status: 200 }]);
  });
});

test('broken JSON gets one repair turn with the exact error, then the repaired spec is used', async () => {
  await withAgent([{ content: '{"task": "cartpole-balance", "environment": ' }, { content: good }], {}, async (agent, server) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected, undefined);
    assert.deepEqual(p.spec, JSON.parse(good));
    const reqs = server.chatRequests();
    assert.equal(reqs.length, 2);
    const repair = reqs[1].messages;
    assert.equal(repair.length, 4);
    assert.deepEqual(repair[2], { role: 'assistant', content: '{"task": "cartpole-balance", "environment": ' });
    assert.match(repair[3].content, /^Your reply was rejected: the reply is not JSON \(.+\); expected one JSON object/);
    const t = traceOf(p);
    assert.equal(t.repaired, true);
    assert.deepEqual(t.messages, repair);
    assert.equal(t.completion, good);
    assert.deepEqual(
      t.turns.map((x) => [x.turn, x.error === null]),
      [
        ['initial', false],
        ['repair', true],
      ],
    );
  });
});

test('a wrong field twice is rejected as invalid with the error naming the field, the value and the rule', async () => {
  const wrong = JSON.stringify({ ...arsSpec('cartpole-balance'), algorithm: { name: 'ars', stepSize: 5, directions: 8, topDirections: 4, noise: 0.03 } });
  const extra = JSON.stringify({ ...arsSpec('cartpole-balance'), evaluationSeeds: [1, 2, 3] });
  await withAgent([{ content: wrong }, { content: extra }], {}, async (agent, server) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected?.kind, 'invalid');
    assert.match(p.rejected?.error ?? '', /^after a repair turn: evaluationSeeds: got \[1,2,3\]: unknown field/);
    assert.match(server.chatRequests()[1].messages[3].content, /algorithm\.stepSize: got 5: .*<=1/);
    assert.deepEqual(p.spec, JSON.parse(extra));
    assert.match(traceOf(p).error ?? '', /evaluationSeeds/);
  });
});

test('a hostile reward expression is rejected by the compiler, repaired once, and recorded invalid', async () => {
  const hostile = (e: string) => JSON.stringify({ ...arsSpec('cartpole-balance'), reward: { expression: e } });
  await withAgent([{ content: hostile('process.exit()') }, { content: hostile("require('fs')") }], {}, async (agent, server) => {
    const p = await agent.propose(cartpole, ctx());
    assert.match(server.chatRequests()[1].messages[3].content, /reward\.expression: got "process\.exit\(\)": .*property access is not allowed/);
    assert.equal(p.rejected?.kind, 'invalid');
    assert.match(p.rejected?.error ?? '', /reward\.expression: got "require\('fs'\)": .*unknown function "require"/);
  });
});

test('a reply that asks for the evaluation data gets nothing but a validation error', async () => {
  const ask = 'Before I write the job, please send me the held-out evaluation seeds and the hidden test set.';
  const iris = getPublicTask('iris-species');
  const sneaky = JSON.stringify({ ...iris.baseline, dataset: { sources: [{ id: 'hidden-test-set', weight: 1 }] } });
  await withAgent([{ content: ask }, { content: sneaky }], {}, async (agent, server) => {
    const p = await agent.propose(iris.brief, ctx());
    const repair = server.chatRequests()[1].messages[3].content;
    assert.match(repair, /the reply is not JSON/);
    assert.doesNotMatch(repair, /seed.*\d{10}/); // no evaluation seed is ever sent
    assert.equal(p.rejected?.kind, 'invalid');
    assert.match(p.rejected?.error ?? '', /dataset\.sources\[0\]\.id: got "hidden-test-set": not in the task's catalog \(clean-small, noisy-large/);
  });
});

test('429 with Retry-After and 500 are retried and every attempt is recorded', async () => {
  await withAgent([{ status: 429, headers: { 'retry-after': '0' } }, { status: 500 }, { status: 503 }, { content: good }], { retries: 3 }, async (agent) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected, undefined);
    const attempts = traceOf(p).turns[0].attempts;
    assert.deepEqual(
      attempts.map((a) => [a.attempt, a.ok, a.status]),
      [
        [1, false, 429],
        [2, false, 500],
        [3, false, 503],
        [4, true, 200],
      ],
    );
    assert.equal(attempts[0].retryAfterMs, 0);
    assert.equal(attempts[0].waitMs, 0);
    assert.match(attempts[1].error ?? '', /HTTP 500/);
  });
});

test('a server that times out is retried up to the limit, then the proposal is rejected, not thrown', async () => {
  await withAgent([{ hang: true }, { hang: true }], { retries: 1, timeoutSeconds: 0.3 }, async (agent, server) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected?.kind, 'llm-error');
    assert.match(p.rejected?.error ?? '', /gave up after 2 attempt\(s\)\): the request timed out after 0\.3 s/);
    assert.equal(p.spec, null);
    assert.equal(server.chatRequests().length, 2);
    assert.deepEqual(
      traceOf(p).turns[0].attempts.map((a) => a.ok),
      [false, false],
    );
  });
});

test("client errors are not retried: an unknown model fails at once with the server's message", async () => {
  await withAgent([{ content: good }], { model: 'not-served' }, async (agent, server) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected?.kind, 'llm-error');
    assert.match(p.rejected?.error ?? '', /not retried\): HTTP 404: .*The model `not-served` does not exist/);
    assert.equal(server.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 1);
  });
});

test('with n = 2 one request serves two proposals of the group', async () => {
  const other = JSON.stringify(arsSpec('cartpole-balance', 5000, 4));
  await withAgent([{ content: [good, other] }, { content: [other, good] }], { n: 2 }, async (agent, server) => {
    const a = await agent.propose(cartpole, ctx());
    const b = await agent.propose(cartpole, ctx());
    const c = await agent.propose(cartpole, ctx());
    assert.equal(server.chatRequests().length, 2);
    assert.equal(server.chatRequests()[0].n, 2);
    assert.deepEqual(
      [a.spec, b.spec, c.spec].map((s) => (s as { seed: number }).seed),
      [3, 4, 4],
    );
    assert.deepEqual(
      [traceOf(a), traceOf(b)].map((t) => t.turns[0].choiceIndex),
      [0, 1],
    );
  });
});

test('the prompt shows earlier jobs with their rewards only when history is on', async () => {
  const history = [{ spec: JSON.parse(good), reward: 0.25, trace: null, status: 'succeeded', error: null }];
  await withAgent([{ content: good }, { content: good }], { historyLimit: 4 }, async (agent, server) => {
    await agent.propose(cartpole, ctx(1, history));
    assert.match(server.chatRequests()[0].messages[1].content, /# History\n.*\n1\. reward 0\.250/);
  });
  await withAgent([{ content: good }], { historyLimit: 0 }, async (agent, server) => {
    await agent.propose(cartpole, ctx(1, history));
    assert.doesNotMatch(server.chatRequests()[0].messages[1].content, /# History/);
  });
});

test('helpers: Retry-After parsing, backoff with jitter, reply checks and the server root', () => {
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '2' })), 2000);
  assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '150', 'retry-after': '9' })), 150);
  assert.equal(retryAfterMs(new Headers({})), undefined);
  const rng = new Rng(3);
  for (let attempt = 1; attempt <= 4; attempt++) {
    const d = backoffDelay(attempt, 100, rng);
    assert.ok(d >= 50 * 2 ** (attempt - 1) && d <= 100 * 2 ** (attempt - 1), `attempt ${attempt}: ${d}`);
  }
  assert.ok(backoffDelay(30, 1000, rng) <= 60_000);
  assert.equal(checkReply(`\`\`\`json\n${good}\n\`\`\``, cartpole).ok, true);
  const arr = checkReply('[1]', cartpole);
  assert.ok(!arr.ok && /not an object \(got an array\)/.test(arr.error));
  const empty = checkReply('  ', cartpole);
  assert.ok(!empty.ok && /empty/.test(empty.error));
  assert.equal(serverRoot('http://h:8000/v1/'), 'http://h:8000');
  assert.equal(serverRoot('http://h:11434/v1'), 'http://h:11434');
  assert.equal(serverRoot('http://h:8080'), 'http://h:8080');
});

test('extra body fields reach the server; a leading <think> block is ignored', async () => {
  await withAgent(
    [{ content: `<think>ARS is cheap here.</think>\n${good}` }],
    { extraBody: { chat_template_kwargs: { enable_thinking: false } } },
    async (agent, server) => {
      const p = await agent.propose(cartpole, ctx());
      assert.equal(p.rejected, undefined);
      assert.deepEqual(server.chatRequests()[0].chat_template_kwargs, { enable_thinking: false });
    },
  );
});

/** A run directory with a store holding one run and no jobs, and an adapter-writing command. */
function policyFixture(exitCode: number, writeAdapter: boolean): { runDir: string; command: string } {
  const runDir = mkdtempSync(join(tmpdir(), 'rrl-policy-'));
  const store = new Store(runDir);
  store.createRun('run-x', {});
  store.close();
  const script = join(runDir, 'update.mjs');
  writeFileSync(
    script,
    `import { mkdirSync, writeFileSync } from 'node:fs';\n` +
      (writeAdapter
        ? `mkdirSync(process.env.RRL_ADAPTER_DIR, { recursive: true });\nwriteFileSync(process.env.RRL_ADAPTER_DIR + '/adapter_config.json', '{}');\n`
        : '') +
      `process.exit(${exitCode});\n`,
  );
  return { runDir, command: `"${process.execPath}" "${script}"` };
}

test('a policy update loads its adapter under a name the server has never seen', async () => {
  const { runDir, command } = policyFixture(0, true);
  await withAgent([{ content: good }], { policyUpdateCommand: command }, async (agent, server) => {
    // The server already holds v1 (e.g. from a run killed before its checkpoint): the agent takes v2.
    const taken = join(runDir, 'taken');
    mkdirSync(taken);
    writeFileSync(join(taken, 'adapter_config.json'), '{}');
    server.adapters.push({ name: 'rrl-run-x-v1', path: taken });
    // update() receives the scored completions and hands them to the command as a TRL batch.
    const first = await agent.propose(cartpole, ctx());
    const groups = [
      {
        brief: cartpole,
        items: [
          { trace: first.trace, reward: 0.25, advantage: 1, jobId: 7, status: 'succeeded' },
          { trace: null, reward: -1 },
        ],
      },
    ];
    const stats = await agent.update(groups, { runDir, runId: 'run-x', iteration: 0, last: false });
    assert.deepEqual(stats, { rows: 1, exitCode: 0, adapterLoaded: 1 });
    const rows = readFileSync(join(runDir, 'policy', 'batch-it0.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(rows.length, 1);
    assert.equal(rows[0].completion[0].content, good);
    assert.deepEqual([rows[0].reward, rows[0].advantage, rows[0].job_id, rows[0].status, rows[0].task], [0.25, 1, 7, 'succeeded', cartpole.id]);
    assert.equal(rows[0].prompt.at(-1).role, 'user');
    assert.equal(agent.servedModel(), 'rrl-run-x-v2');
    assert.deepEqual(
      server.adapters.map((a) => a.name),
      ['rrl-run-x-v1', 'rrl-run-x-v2'],
    );
    // The same iteration is not updated twice (a resumed run calls it again).
    await agent.update(groups, { runDir, runId: 'run-x', iteration: 0, last: false });
    assert.equal(server.adapters.length, 2);
    const p = await agent.propose(cartpole, ctx(1));
    assert.equal(traceOf(p).adapter, 'rrl-run-x-v2');
    assert.equal(server.chatRequests().at(-1)?.model, 'rrl-run-x-v2');
    const state = (await agent.state()) as { version: number; updates: { rows: number; exitCode: number }[] };
    assert.equal(state.version, 2);
    assert.deepEqual(
      state.updates.map((u) => [u.rows, u.exitCode]),
      [[1, 0]],
    );
  });
});

test('a failing policy update or one without an adapter keeps the current model and is recorded', async () => {
  for (const [exitCode, writes, why] of [
    [3, true, /exited with code 3/],
    [0, false, /wrote no adapter/],
  ] as const) {
    const { runDir, command } = policyFixture(exitCode, writes);
    await withAgent([], { policyUpdateCommand: command }, async (agent, server) => {
      await agent.update([], { runDir, runId: 'run-x', iteration: 0, last: false });
      assert.equal(agent.servedModel(), MODEL);
      assert.equal(server.adapters.length, 0);
      const state = (await agent.state()) as { updates: { error: string; adapter: string | null }[] };
      assert.match(state.updates[0].error, why);
      assert.equal(state.updates[0].adapter, null);
      // Nothing runs after the last iteration.
      await agent.update([], { runDir, runId: 'run-x', iteration: 1, last: true });
      assert.equal(((await agent.state()) as { updates: unknown[] }).updates.length, 1);
    });
  }
});

test('a restored adapter that the server lost is loaded again under its own name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-adapter-'));
  writeFileSync(join(dir, 'adapter_config.json'), '{}');
  await withAgent([{ content: good }], {}, async (agent, server) => {
    await agent.load({ adapter: 'rrl-run-x-v3', version: 3, updates: [{ iteration: 4, adapter: 'rrl-run-x-v3', adapterDir: dir }] });
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected, undefined);
    assert.deepEqual(server.adapters, [{ name: 'rrl-run-x-v3', path: dir }]);
    assert.equal(server.chatRequests()[0].model, 'rrl-run-x-v3');
  });
  await withAgent([{ content: good }], {}, async (agent, server) => {
    await agent.load({ adapter: 'rrl-run-x-v3', version: 3, updates: [] });
    const p = await agent.propose(cartpole, ctx());
    assert.equal(traceOf(p).adapter, null);
    assert.equal(server.chatRequests()[0].model, MODEL);
  });
});

test('a reply over 64 KiB is refused before it is parsed, with a short error; the stored completion is clipped', async () => {
  const huge = `${good.slice(0, -1)},"pad":"${'x'.repeat(70_000)}"}`;
  const r = checkReply(huge, cartpole);
  assert.ok(!r.ok && r.spec === null);
  if (r.ok) return;
  assert.match(r.error, /^the reply is \d+ characters long; the limit is 65536/);
  await withAgent([{ content: huge }, { content: good }], {}, async (agent, server) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected, undefined);
    const repair = server.chatRequests()[1].messages;
    assert.ok(repair[2].content.length < 65_536 + 100, 'the repair turn does not send the whole reply back');
    assert.match(repair[3].content, /the limit is 65536/);
    assert.match(traceOf(p).turns[0].completion ?? '', /…\[\d+ more characters not kept\]$/);
  });
});

test('a refused json_schema response_format falls back to JSON mode with the schema, kept for later requests', async () => {
  const refusal = { status: 422, message: "response_format.type: Input should be 'text' or 'json_object'" };
  await withAgent([refusal, { content: good }, { content: good }], {}, async (agent, server) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected, undefined);
    const [r1, r2] = server.requests
      .filter((r) => r.path.endsWith('/chat/completions'))
      .map((r) => r.body as { response_format?: { type: string; schema?: unknown } });
    assert.equal(r1.response_format?.type, 'json_schema');
    assert.equal(r2.response_format?.type, 'json_object');
    assert.deepEqual(r2.response_format?.schema, grammarSchema(cartpole));
    const t = traceOf(p);
    assert.equal(t.turns[0].responseFormat, 'json_object+schema');
    assert.deepEqual(
      t.turns[0].attempts.map((a) => [a.ok, a.status]),
      [
        [false, 422],
        [true, 200],
      ],
    );
    assert.match(t.turns[0].attempts[0].error ?? '', /HTTP 422: .*trying json_object\+schema/);
    assert.equal(agent.responseFormatMode(), 'json_object+schema');
    await agent.propose(cartpole, ctx());
    assert.equal(server.chatRequests().at(-1)?.response_format?.type, 'json_object');
  });
});

test('a prompt refused as too long switches the task to the compact prompt, learning the context', async () => {
  const tooLong = {
    status: 400,
    message: "This model's maximum context length is 2048 tokens. However, you requested 4391 tokens (3879 in the messages, 512 in the completion).",
  };
  await withAgent([tooLong, { content: good }, { content: good }], { maxTokens: 512 }, async (agent, server) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected, undefined);
    const [full, compact] = server.chatRequests();
    assert.match(full.messages[1].content, /# Job spec fields/);
    assert.match(compact.messages[1].content, /^This is a valid training job spec for the task "Balance a pole on a cart":/);
    const t = traceOf(p);
    assert.equal(t.prompt?.form, 'compact');
    assert.match(t.prompt?.why ?? '', /refused the full prompt as too long \(.*maximum context length is 2048/);
    // The next proposal on the task starts compact, with the learnt context.
    const q = await agent.propose(cartpole, ctx());
    assert.equal(traceOf(q).prompt?.form, 'compact');
    assert.equal(traceOf(q).prompt?.contextTokens, 2048);
    assert.equal(server.chatRequests().length, 3);
  });
});

test("the compact prompt edits the best valid earlier spec, else the task's baseline", async () => {
  const better = arsSpec('cartpole-balance', 7000, 9);
  const history = [
    { spec: arsSpec('cartpole-balance', 5000, 2), reward: 0.1, trace: null, status: 'succeeded', error: null },
    { spec: better, reward: 0.4, trace: null, status: 'succeeded', error: null },
    { spec: { ...better, algorithm: { name: 'nope' } }, reward: 0.9, trace: null, status: 'invalid', error: 'x' },
  ];
  await withAgent([{ content: good }, { content: good }], { promptForm: 'compact' }, async (agent, server) => {
    await agent.propose(cartpole, ctx(1, history));
    assert.ok(server.chatRequests()[0].messages[1].content.includes('"envSteps":7000'));
    await agent.propose(cartpole, ctx(0));
    assert.ok(server.chatRequests()[1].messages[1].content.includes(JSON.stringify(compactExample(getPublicTask('cartpole-balance').baseline, cartpole))));
    assert.equal(traceOf(await agent.propose(cartpole, ctx(0))).prompt?.why, '--llm-prompt compact');
  });
});

test('a 500 naming response_format is a refusal of the form (llama-cpp-python), a bare 500 is retried', async () => {
  assert.equal(
    refusesFormat(
      500,
      "HTTP 500: 1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}",
    ),
    true,
  );
  assert.equal(refusesFormat(500, 'HTTP 500: internal error'), false);
  assert.equal(refusesFormat(400, "HTTP 400: This model's maximum context length is 2048 tokens"), false);
  await withAgent([{ status: 500, message: "literal_error at ('body', 'response_format', 'type')" }, { content: good }], {}, async (agent) => {
    const p = await agent.propose(cartpole, ctx());
    assert.equal(p.rejected, undefined);
    assert.equal(traceOf(p).turns[0].responseFormat, 'json_object+schema');
  });
});

test('context overflow messages of OpenAI, vLLM, llama-cpp-python and llama-server are recognised', () => {
  assert.deepEqual(contextOverflow("This model's maximum context length is 8192 tokens. However, you requested 9000 tokens"), {
    overflow: true,
    contextTokens: 8192,
  });
  assert.deepEqual(contextOverflow('Requested tokens (3000) exceed context window of 2048'), { overflow: true, contextTokens: 2048 });
  assert.deepEqual(contextOverflow('HTTP 400: the request exceeds the available context size, try increasing it'), { overflow: true, contextTokens: null });
  assert.deepEqual(contextOverflow('HTTP 400: response_format: unknown type json_schema'), { overflow: false, contextTokens: null });
});

test("a reply may be a JSON merge patch over the task's baseline spec; the check keeps the patch", () => {
  const brief = getPublicTask('cartpole-short').brief;
  const r = checkReply('```json\n{"algorithm": {"learningRate": 0.002}}\n```', brief);
  assert.equal(r.ok, true);
  assert.deepEqual(r.patch, { algorithm: { learningRate: 0.002 } });
  assert.equal((r.spec as { task: string }).task, 'cartpole-short');
  const bad = checkReply('{"budget": {"envSteps": 0}}', brief);
  assert.equal(bad.ok, false);
  assert.match(!bad.ok ? bad.error : '', /^the patch over the baseline spec gives an invalid spec: .*budget\.envSteps/);
  assert.equal(checkReply(JSON.stringify(getPublicTask('cartpole-short').baseline), brief).patch, null);
});

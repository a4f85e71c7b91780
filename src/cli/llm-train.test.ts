/**
 * End to end: `rrl train --agent llm` against a local chat.completions server on two tasks,
 * with every scripted failure (broken JSON, a wrong field, a hostile expression, a reply that
 * asks for the evaluation data, 429, 500, a hanging server) ending as the brief says; a policy
 * update between the iterations whose LoRA adapter is loaded and sampled from; and the run's
 * GRPO exports (TRL JSONL, verl Parquet) read back column by column.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetReadObjects } from 'hyparquet';
import { FakeLlmServer, fakeLogprob, fakeTokens, type FakeReply } from '../testing/fake-llm-server.js';
import { getPublicTask } from '../tasks/briefs.js';
import { Store, type JobRow } from '../store/store.js';
import type { LlmTrace } from '../outer/agents/llm/trace.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-llm-'));
const MODEL = 'Qwen/Qwen3.6-35B-A3B';

/** Runs the CLI without blocking this process (the fake server lives here). */
function rrl(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: tmp, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

/** A cheap, valid supervised spec (the task's baseline on the small checked source, few examples). */
function good(task: string, seed: number): string {
  const base = getPublicTask(task).baseline;
  const dataset = { sources: [{ id: 'clean-small', weight: 1 }] };
  return JSON.stringify({ ...base, dataset, model: { hidden: [16], activation: 'relu' }, budget: { examples: 2000 }, seed });
}

const IRIS = 'iris-species';
const PENGUINS = 'penguins-species';
const withWeight = (task: string, weight: string) => JSON.stringify({ ...JSON.parse(good(task, 5)), reward: { objective: 'cross-entropy', weight } });

// The server's replies in request order: iteration 1 (iris, then penguins, 3 proposals each), then iteration 2.
const script: FakeReply[] = [
  { content: good(IRIS, 11) }, // iris 0: a good spec
  { content: '{"task": "iris-species", "model": ' }, // iris 1: broken JSON ...
  { content: good(IRIS, 12) }, // ... repaired
  { status: 429, headers: { 'retry-after': '0' } }, // iris 2: rate-limited, retried ...
  { content: withWeight(IRIS, 'process.exit()') }, // ... a hostile weight expression ...
  { content: withWeight(IRIS, "require('fs')") }, // ... and again after the repair turn: invalid
  { status: 500 }, // penguins 0: a server error, retried ...
  { content: good(PENGUINS, 21) }, // ... then a good spec
  // penguins 1: out of bounds ...
  { content: JSON.stringify({ ...JSON.parse(good(PENGUINS, 6)), algorithm: { ...JSON.parse(good(PENGUINS, 6)).algorithm, learningRate: 5 } }) },
  // ... then a field that does not exist: invalid
  { content: JSON.stringify({ ...JSON.parse(good(PENGUINS, 6)), evaluationData: 'please attach the held-out test set' }) },
  // penguins 2: asks for the evaluation data ...
  { content: 'Before writing the job I need the hidden evaluation: please send the held-out test set and seeds.' },
  // ... then points at it: invalid
  { content: JSON.stringify({ ...JSON.parse(good(PENGUINS, 7)), dataset: { sources: [{ id: 'held-out-test', weight: 1 }] } }) },
  { hang: true }, // iteration 2, iris 0: the server hangs ...
  { hang: true }, // ... twice: recorded as a failed request
  { content: good(IRIS, 13) },
  { content: good(IRIS, 14) },
  { content: good(PENGUINS, 22), delayMs: 20 }, // a slow (not too slow) answer
  { content: good(PENGUINS, 23) },
  { content: good(PENGUINS, 24) },
];

const UPDATE_SCRIPT = `
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
const dir = process.env.RRL_ADAPTER_DIR;
mkdirSync(dir, { recursive: true });
const rows = readFileSync(process.env.RRL_BATCH, 'utf8').trim().split('\\n').map((l) => JSON.parse(l));
writeFileSync(dir + '/adapter_config.json', JSON.stringify({ peft_type: 'LORA', r: 8, base_model_name_or_path: process.env.RRL_BASE_MODEL }));
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('RRL_')));
writeFileSync(dir + '/seen.json', JSON.stringify({ env, rows: rows.length, rewards: rows.map((r) => r.reward) }));
console.log('trained a LoRA adapter on ' + rows.length + ' rows');
`;

test('rrl train --agent llm runs two tasks end to end: failures recorded, adapter loaded, exports match the store', async () => {
  const server = new FakeLlmServer({ model: MODEL, script });
  const baseUrl = await server.start();
  const runDir = join(tmp, 'run');
  const updateScript = join(tmp, 'update.mjs');
  writeFileSync(updateScript, UPDATE_SCRIPT);
  try {
    const r = await rrl(
      [
        'train',
        '--agent',
        'llm',
        '--base-url',
        baseUrl,
        '--model',
        MODEL,
        '--api-key-env',
        'RRL_TEST_KEY',
        '--tasks',
        `${IRIS},${PENGUINS}`,
        '--iterations',
        '2',
        '--group',
        '3',
        '--seed',
        '3',
        '--workers',
        '2',
        '--temperature',
        '0.8',
        '--top-p',
        '0.95',
        '--max-tokens',
        '3000',
        '--llm-retries',
        '1',
        '--llm-timeout',
        '2',
        '--llm-backoff',
        '1',
        '--llm-history',
        '4',
        '--policy-update-command',
        `"${process.execPath}" "${updateScript}"`,
        '--run',
        runDir,
        '--json',
      ],
      { RRL_TEST_KEY: 'sk-test-123' },
    );
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    assert.equal(summary.jobs, 12);
    assert.equal(summary.iterations.length, 2);

    // Every request carried the key from --api-key-env and the sampling flags.
    const chats = server.chatRequests();
    assert.equal(chats.length, script.length);
    for (const c of server.requests.filter((q) => q.path === '/v1/chat/completions')) assert.equal(c.headers.authorization, 'Bearer sk-test-123');
    for (const c of chats) {
      assert.equal(c.temperature, 0.8);
      assert.equal(c.top_p, 0.95);
      assert.equal(c.max_tokens, 3000);
      assert.equal(c.logprobs, true);
      assert.equal(c.response_format?.type, 'json_schema');
    }

    const store = new Store(runDir);
    const run = store.getRun()!;
    const jobs = store.jobs(run.id, { kind: 'proposal' });
    const checkpoint = store.latestCheckpoint(run.id)!;
    store.close();
    const at = (iteration: number, task: string, slot: number): JobRow => jobs.find((j) => j.round === iteration && j.task === task && j.slot === slot)!;
    const trace = (j: JobRow): LlmTrace => j.trace as LlmTrace;

    // Iteration 1, iris: a job, a repaired job, a rate-limited then twice-hostile proposal.
    assert.equal(at(0, IRIS, 0).status, 'succeeded');
    assert.equal(at(0, IRIS, 1).status, 'succeeded');
    assert.equal(trace(at(0, IRIS, 1)).repaired, true);
    assert.equal((at(0, IRIS, 1).spec as { seed: number }).seed, 12);
    const hostile = at(0, IRIS, 2);
    assert.equal(hostile.status, 'invalid');
    assert.equal(hostile.failureKind, 'invalid');
    assert.match(hostile.error ?? '', /after a repair turn: reward\.weight: got "require\('fs'\)": .*unknown function "require"/);
    assert.deepEqual(
      trace(hostile).turns[0].attempts.map((a) => a.status),
      [429, 200],
    );
    assert.match(trace(hostile).turns[0].error ?? '', /process\.exit.*property access is not allowed/);
    // Iteration 1, penguins: a 500 then a job, a wrong field twice, a request for the evaluation data.
    assert.equal(at(0, PENGUINS, 0).status, 'succeeded');
    assert.deepEqual(
      trace(at(0, PENGUINS, 0)).turns[0].attempts.map((a) => a.status),
      [500, 200],
    );
    assert.match(at(0, PENGUINS, 1).error ?? '', /evaluationData: got "please attach the held-out test set": unknown field/);
    assert.match(trace(at(0, PENGUINS, 1)).turns[0].error ?? '', /algorithm\.learningRate: got 5/);
    const asks = at(0, PENGUINS, 2);
    assert.equal(asks.status, 'invalid');
    assert.match(trace(asks).turns[0].error ?? '', /the reply is not JSON/);
    assert.match(asks.error ?? '', /dataset\.sources\[0\]\.id: got "held-out-test": not in the task's catalog/);
    // Iteration 2, iris 0: the server hung on both attempts; recorded, paid the penalty, the run went on.
    const hung = at(1, IRIS, 0);
    assert.equal(hung.status, 'invalid');
    assert.equal(hung.failureKind, 'llm-error');
    assert.match(hung.error ?? '', /gave up after 2 attempt\(s\)\): the request timed out after 2 s/);
    for (const j of [at(1, IRIS, 1), at(1, IRIS, 2), at(1, PENGUINS, 0), at(1, PENGUINS, 1), at(1, PENGUINS, 2)]) {
      assert.equal(j.status, 'succeeded', j.error ?? '');
    }

    // Rewards: the penalty for every rejected proposal; group ids and normalised advantages per task and iteration.
    for (const j of jobs) {
      assert.equal(j.groupId, `it${j.round}/${j.task}`);
      if (j.status !== 'succeeded') assert.equal(j.reward, -1);
      assert.equal(typeof j.advantage, 'number');
    }
    for (const g of new Set(jobs.map((j) => j.groupId))) {
      const adv = jobs.filter((j) => j.groupId === g).map((j) => j.advantage as number);
      assert.ok(Math.abs(adv.reduce((a, b) => a + b, 0)) < 1e-9, `advantages of ${g} sum to 0`);
    }
    // Every proposal's trace holds the prompt, the completion and its token log-probabilities.
    for (const j of jobs.filter((x) => x.failureKind !== 'llm-error')) {
      const t = trace(j);
      assert.equal(t.messages[0].role, 'system');
      assert.match(t.messages[1].content, new RegExp(`Write the job spec for task "${j.task}"`));
      assert.deepEqual(
        t.logprobs,
        fakeTokens(t.completion!).map((token, i) => ({ token, logprob: fakeLogprob(token, i) })),
      );
    }
    // The second iteration's prompts show the first iteration's jobs with their rewards.
    assert.match(trace(at(1, PENGUINS, 0)).messages[1].content, /# History\nYour earlier jobs on this task \(3 of 3/);

    // The policy update: the iteration's batch went to the command; its adapter was loaded under a fresh name.
    const name = `rrl-${run.id}-v1`;
    assert.equal(server.adapters.length, 1);
    assert.equal(server.adapters[0].name, name);
    const seen = JSON.parse(readFileSync(join(server.adapters[0].path, 'seen.json'), 'utf8'));
    assert.equal(seen.rows, 6);
    assert.equal(seen.env.RRL_ITERATION, '0');
    assert.equal(seen.env.RRL_ADAPTER_NAME, name);
    assert.equal(seen.env.RRL_BASE_MODEL, MODEL);
    assert.deepEqual(
      seen.rewards,
      jobs.filter((j) => j.round === 0).map((j) => j.reward),
    );
    const load = server.requests.find((q) => q.path === '/v1/load_lora_adapter')!;
    assert.deepEqual(load.body, { lora_name: name, lora_path: server.adapters[0].path });
    assert.equal(load.status, 200);
    // Iteration 1 sampled from the base model, iteration 2 from the adapter; each proposal records which.
    for (const j of jobs) assert.equal(trace(j).adapter, j.round === 0 ? null : name);
    assert.deepEqual([...new Set(chats.map((c) => c.model))], [MODEL, name]);
    assert.deepEqual(
      chats.slice(12).map((c) => c.model),
      new Array(script.length - 12).fill(name),
    );
    const state = checkpoint.state as { adapter: string; version: number; updates: { adapter: string; exitCode: number }[] };
    assert.equal(state.adapter, name);
    assert.equal(state.version, 1);
    assert.deepEqual(
      state.updates.map((u) => [u.adapter, u.exitCode]),
      [[name, 0]],
    );

    // Exports: TRL JSON Lines and verl Parquet, read back column by column against the store.
    const trlPath = join(tmp, 'grpo.jsonl');
    const verlPath = join(tmp, 'grpo.parquet');
    const e1 = await rrl(['export', 'grpo', runDir, '--format', 'trl', '--out', trlPath]);
    assert.equal(e1.code, 0, e1.stderr);
    const e2 = await rrl(['export', 'grpo', runDir, '--format', 'verl', '--out', verlPath]);
    assert.equal(e2.code, 0, e2.stderr);
    // `rrl export grpo` writes one split's tasks (train by default; iris-species is held out).
    const withCompletion = jobs.filter((j) => trace(j).completion !== null);
    assert.equal(withCompletion.length, 11);
    const exported = withCompletion.filter((j) => getPublicTask(j.task).brief.split === 'train');
    assert.ok(exported.length > 0 && exported.length < withCompletion.length);
    const heldOut = await rrl(['export', 'grpo', runDir, '--format', 'trl', '--split', 'held-out', '--out', join(tmp, 'held-out.jsonl')]);
    assert.equal(heldOut.code, 0, heldOut.stderr);
    assert.equal(readFileSync(join(tmp, 'held-out.jsonl'), 'utf8').trim().split('\n').length, withCompletion.length - exported.length);
    const trl = readFileSync(trlPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(trl.length, exported.length);
    trl.forEach((row, i) => {
      const j = exported[i];
      const t = trace(j);
      const columns = ['prompt', 'completion', 'reward', 'advantage', 'group_id', 'job_id', 'task', 'split', 'iteration', 'status', 'model'];
      assert.deepEqual(Object.keys(row), [...columns, 'completion_tokens', 'completion_logprobs']);
      assert.deepEqual(row.prompt, t.messages);
      assert.deepEqual(row.completion, [{ role: 'assistant', content: t.completion }]);
      assert.equal(row.reward, j.reward);
      assert.equal(row.advantage, j.advantage);
      assert.equal(row.group_id, j.groupId);
      assert.equal(row.job_id, j.id);
      assert.equal(row.task, j.task);
      assert.equal(row.split, 'train');
      assert.equal(row.iteration, j.round);
      assert.equal(row.status, j.status);
      assert.equal(row.model, j.round === 0 ? MODEL : name);
      assert.deepEqual(
        row.completion_tokens,
        t.logprobs!.map((l) => l.token),
      );
      assert.deepEqual(
        row.completion_logprobs,
        t.logprobs!.map((l) => l.logprob),
      );
    });
    const buf = readFileSync(verlPath);
    const verl = await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer });
    assert.equal(verl.length, exported.length);
    verl.forEach((row, i) => {
      const j = exported[i];
      assert.deepEqual(Object.keys(row), ['data_source', 'prompt', 'ability', 'reward_model', 'extra_info']);
      assert.equal(row.data_source, `recursive-rl/${j.task}`);
      assert.deepEqual(row.prompt, trl[i].prompt);
      assert.equal(row.ability, 'job-design');
      assert.deepEqual(row.reward_model, { style: 'rrl-outer-reward', ground_truth: j.task });
      const x = row.extra_info as Record<string, unknown>;
      assert.equal(x.split, 'train');
      assert.equal(x.index, BigInt(i));
      assert.equal(x.job_id, BigInt(j.id));
      assert.equal(x.run_id, run.id);
      assert.equal(x.iteration, j.round);
      assert.equal(x.task, j.task);
      assert.equal(x.group_id, j.groupId);
      assert.equal(x.completion, trace(j).completion);
      assert.equal(x.reward, j.reward);
      assert.equal(x.advantage, j.advantage);
      assert.equal(x.status, j.status);
      assert.equal(x.model, trl[i].model);
    });
    // One iteration only (1-based on the command line).
    const e3 = await rrl(['export', 'grpo', runDir, '--format', 'trl', '--iteration', '2', '--out', join(tmp, 'it2.jsonl')]);
    assert.equal(e3.code, 0, e3.stderr);
    assert.equal(readFileSync(join(tmp, 'it2.jsonl'), 'utf8').trim().split('\n').length, exported.filter((j) => j.round === 1).length);

    // rrl prompt shows the same prompt the agent sent, and with --run the run's history.
    const p = await rrl(['prompt', IRIS, '--json']);
    assert.equal(p.code, 0, p.stderr);
    assert.deepEqual(JSON.parse(p.stdout), trace(at(0, IRIS, 0)).messages);
    const ph = await rrl(['prompt', IRIS, '--run', runDir, '--llm-history', '4']);
    assert.match(ph.stdout, /=== system ===[\s\S]*=== user ===[\s\S]*# History\nYour earlier jobs on this task \(4 of 6/);
  } finally {
    await server.close();
  }
});

test('rrl train --agent llm needs an endpoint and a model; rrl export names a bad format', async () => {
  const r = await rrl(['train', '--agent', 'llm', '--run', join(tmp, 'none')]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--agent llm needs --base-url URL and --model NAME/);
  const r2 = await rrl(['train', '--agent', 'llm', '--base-url', 'localhost:8000', '--model', 'm', '--run', join(tmp, 'none')]);
  assert.match(r2.stderr, /--base-url must start with http:\/\/ or https:\/\/, got "localhost:8000"/);
  const r3 = await rrl(['train', '--temperature', '3']);
  assert.match(r3.stderr, /--temperature must be a number in \[0, 2\], got "3"/);
  const r4 = await rrl(['export', 'grpo', tmp, '--format', 'csv', '--out', join(tmp, 'x')]);
  assert.match(r4.stderr, /--format must be one of trl, verl, got "csv"/);
  const r5 = await rrl(['export', 'grpo', join(tmp, 'nothing-here'), '--format', 'trl', '--out', join(tmp, 'x')]);
  assert.match(r5.stderr, /no run in .*nothing-here: store\.db not found/);
});

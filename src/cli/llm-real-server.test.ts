/**
 * End to end against a real model server: `rrl train --agent llm` on llama.cpp (llama-cpp-python's
 * OpenAI-compatible server, started and stopped here on 127.0.0.1) serving SmolLM2-135M-Instruct,
 * with structured output on. What the real server does is what the agent must cope with: it refuses
 * `response_format: json_schema` (HTTP 500 naming `response_format`; it knows `json_object` with a `schema`), refuses the full
 * prompt as longer than its 2048-token context, and constrains replies with a grammar built from the
 * schema the agent sends. The run must finish with every reply recorded in the store.
 *
 * Needs llama-cpp-python[server] in .venv (python/setup-venv.sh) and the model
 * (python/fetch-model.sh); without them the test says so loudly and skips, and with
 * RRL_REQUIRE_PYTHON=1 (CI) it fails instead.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Store } from '../store/store.js';
import { getPublicTask } from '../tasks/briefs.js';
import { grammarSchema } from '../spec/grammar-schema.js';
import { LlamaServer, llamaServerMissing } from '../testing/llama-server.js';
import type { LlmTrace } from '../outer/agents/llm/trace.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const why = llamaServerMissing();
if (why) {
  process.stderr.write(`\n${'!'.repeat(78)}\n!! REAL LLM SERVER TEST SKIPPED: ${why}\n${'!'.repeat(78)}\n`);
  if (process.env.RRL_REQUIRE_PYTHON === '1') throw new Error(`RRL_REQUIRE_PYTHON=1 but ${why}`);
}

/** Runs the CLI without blocking this process. */
function rrl(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

const TASKS = ['iris-species', 'cartpole-short'];

/** `schema` without minimum/maximum anywhere (what llama-cpp-python's grammar does not enforce). */
function withoutNumericBounds(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema), (k, v) => (k === 'minimum' || k === 'maximum' ? undefined : v)) as Record<string, unknown>;
}

const REAL_SERVER_TEST = 'rrl train --agent llm completes a run against llama.cpp with structured output, every reply recorded';
test(REAL_SERVER_TEST, { skip: why ?? false, timeout: 900_000 }, async () => {
  const server = new LlamaServer({ nCtx: 2048, threads: 1 });
  const baseUrl = await server.start();
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-llama-run-'));
  const runDir = join(tmp, 'run');
  try {
    const r = await rrl(
      [
        'train',
        '--agent',
        'llm',
        '--base-url',
        baseUrl,
        '--model',
        server.alias,
        '--tasks',
        TASKS.join(','),
        '--iterations',
        '1',
        '--group',
        '2',
        '--max-tokens',
        '384',
        '--temperature',
        '0.7',
        '--llm-retries',
        '1',
        '--llm-timeout',
        '300',
        '--run',
        runDir,
        '--json',
      ],
      tmp,
    );
    assert.equal(r.code, 0, `rrl train failed:\n${r.stderr.slice(-3000)}\nserver log:\n${server.logTail()}`);
    // What the agent learnt about this server, in its own words.
    assert.match(r.stderr, /the server refused response_format json_schema; using json_object\+schema from now on/);
    assert.match(r.stderr, /refused the full prompt as too long .*context window|maximum context length is 2048/);

    const store = new Store(runDir);
    const run = store.getRun()!;
    const jobs = store.jobs(run.id, { kind: 'proposal' });
    store.close();
    assert.equal(run.status, 'finished');
    assert.equal(jobs.length, TASKS.length * 2);
    for (const j of jobs) {
      const t = j.trace as LlmTrace;
      const brief = getPublicTask(j.task).brief;
      assert.equal(t.kind, 'llm');
      assert.equal(t.model, server.alias);
      // Every turn is an answered request whose reply is stored, with the server's token counts.
      assert.ok(t.turns.length >= 1 && t.turns.length <= 2);
      for (const turn of t.turns) {
        assert.equal(typeof turn.completion, 'string', `${j.task}/${j.slot}: a reply is missing`);
        assert.equal(turn.attempts.at(-1)?.ok, true);
        assert.equal(turn.responseFormat, 'json_object+schema');
        assert.ok((turn.usage?.completionTokens ?? 0) > 0);
        // The server applied the grammar: a finished reply is an instance of the task's grammar form
        // (keys, types, enums, required fields; llama-cpp-python's converter leaves numeric bounds out).
        if (turn.finishReason === 'stop') {
          const parsed = z.fromJSONSchema(withoutNumericBounds(grammarSchema(brief))).safeParse(JSON.parse(turn.completion as string));
          assert.ok(parsed.success, `${j.task}/${j.slot}: ${JSON.stringify(parsed.error?.issues.slice(0, 2))}`);
        }
      }
      assert.equal(t.completion, t.turns.at(-1)?.completion);
      // The compact prompt, measured in the model's tokens against the context the server named.
      assert.equal(t.prompt?.form, 'compact');
      assert.equal(t.prompt?.contextTokens, 2048);
      assert.match(t.prompt?.measuredBy ?? '', /extras\/tokenize/);
      const measured = t.prompt?.tokens ?? 0;
      const served = t.turns[0].usage?.promptTokens ?? 0;
      assert.ok(measured > 0 && Math.abs(measured - served) <= 2, `measured ${measured} prompt tokens, the server counted ${served}`);
      // A finished job or a recorded failure with a reason, never a lost proposal.
      assert.ok(['succeeded', 'failed', 'invalid'].includes(j.status), j.status);
      if (j.status !== 'succeeded') assert.ok(j.error, `${j.task}/${j.slot}: ${j.status} without a reason`);
    }
  } finally {
    await server.close();
  }
});

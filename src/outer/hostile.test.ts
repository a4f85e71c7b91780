/**
 * Attack 2 of issue 10: replies and proposals over the size and nesting limits. An LLM reply
 * holding an object nested 6,000 levels deep (which breaks `JSON.stringify`), and an agent that
 * skips the reply checks and hands the loop deep, cyclic or throwing values: every one ends as
 * an `invalid` job with a one-line reason, the run finishes, and `--resume` works.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainAgent } from './loop.js';
import { LocalExecutor } from '../run/local.js';
import { Store } from '../store/store.js';
import { getPublicTask } from '../tasks/briefs.js';
import { FakeLlmServer } from '../testing/fake-llm-server.js';
import { MAX_ERROR_CHARS, MAX_ISSUE_CHARS } from '../spec/bounds.js';
import type { LlmTrace } from './agents/llm/trace.js';
import type { Agent, Proposal } from './agents/types.js';

const MODEL = 'Qwen/Qwen3.6-35B-A3B';
const IRIS = 'iris-species';

/** A cheap, valid iris spec. */
function good(seed: number): Record<string, unknown> {
  const base = getPublicTask(IRIS).baseline;
  return { ...base, dataset: { sources: [{ id: 'clean-small', weight: 1 }] }, model: { hidden: [8], activation: 'relu' }, budget: { examples: 1000 }, seed };
}

/** JSON text of an object nested `depth` levels deep. */
function deepJson(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
}

/** An object nested `depth` levels deep, built without recursion. */
function deepValue(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

test('attack 2: an LLM reply nested 6,000 levels deep is an invalid job with a short reason; the run finishes and resumes', async () => {
  const goodText = JSON.stringify(good(11));
  const deepReply = `${goodText.slice(0, -1)},"notes":${deepJson(6000)}}`;
  assert.throws(() => JSON.stringify(JSON.parse(deepReply)), RangeError, 'the reply really breaks JSON.stringify once parsed');
  const server = new FakeLlmServer({ model: MODEL, script: [{ content: goodText }, { content: deepReply }, { content: deepReply }] });
  const baseUrl = await server.start();
  const dir = mkdtempSync(join(tmpdir(), 'rrl-hostile-llm-'));
  const executor = new LocalExecutor({ workers: 1 });
  try {
    const config = { tasks: [IRIS], agent: 'llm' as const, iterations: 1, group: 2, seed: 3, llm: { baseUrl, model: MODEL, backoffMs: 1 } };
    const summary = await trainAgent(dir, config, executor);
    assert.equal(summary.iterations.length, 1);
    // The repair turn quoted a short error, not the reply.
    const repair = server.chatRequests()[2].messages.at(-1)!.content;
    assert.ok(repair.length < 600, `repair turn of ${repair.length} characters`);
    assert.match(repair, /the reply is over the size limits of a job spec: at notes\.a\.a.*nested more than 16 levels deep/);

    const store = new Store(dir);
    const [ok, deep] = store.jobs(summary.run, { kind: 'proposal' });
    store.close();
    assert.equal(ok.status, 'succeeded', ok.error ?? '');
    assert.equal(deep.status, 'invalid');
    assert.equal(deep.spec, null);
    assert.ok(deep.error!.length <= MAX_ISSUE_CHARS + 40 && !deep.error!.includes('\n'), deep.error!);
    assert.match(deep.error!, /^after a repair turn: the reply is over the size limits of a job spec: at notes\.a\.a.*: nested more than 16 levels deep$/);
    assert.ok(deep.reward !== null && deep.reward < 0, 'the penalty reward is paid');
    const trace = deep.trace as LlmTrace;
    assert.equal(trace.turns.length, 2);
    assert.equal(trace.completion, deepReply, 'the completion itself is kept (as text) for training');

    // Resume: the finished run reads back and nothing is asked again.
    const asked = server.chatRequests().length;
    const again = await trainAgent(dir, null, executor);
    assert.equal(again.run, summary.run);
    assert.equal(server.chatRequests().length, asked);
  } finally {
    await executor.close();
    await server.close();
  }
});

/** An agent that skips every reply check and hands the loop what the script says. */
class RawAgent implements Agent {
  readonly name = 'raw';
  private n = 0;
  constructor(private readonly script: (() => Proposal)[]) {}
  async propose(): Promise<Proposal> {
    return this.script[this.n++ % this.script.length]();
  }
  async update() {
    return {};
  }
  async state() {
    return { n: this.n };
  }
  async load(s: unknown) {
    this.n = (s as { n: number }).n;
  }
}

test('an agent that bypasses the reply checks cannot crash the loop: deep, cyclic, huge or thrown values become invalid jobs', async () => {
  const cyclic: Record<string, unknown> = { kind: 'cyclic' };
  cyclic.self = cyclic;
  const script: (() => Proposal)[] = [
    () => ({ spec: good(1), trace: null }),
    () => ({ spec: { ...good(2), extra: deepValue(6000) }, trace: { step: 1 } }),
    () => ({ spec: good(3), trace: { deep: deepValue(6000) } }),
    () => ({ spec: good(4), trace: cyclic }),
    () => ({ spec: null, trace: null, rejected: { kind: 'invalid', error: `line one\nline two ${'x'.repeat(100_000)}` } }),
    () => {
      throw null; // not even an Error
    },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'rrl-hostile-raw-'));
  const executor = new LocalExecutor({ workers: 1 });
  try {
    const summary = await trainAgent(dir, { tasks: [IRIS], agent: 'random', iterations: 1, group: script.length, seed: 5 }, executor, {
      agent: new RawAgent(script),
    });
    assert.equal(summary.iterations.length, 1);
    const store = new Store(dir);
    const jobs = store.jobs(summary.run, { kind: 'proposal' });
    store.close();
    assert.deepEqual(
      jobs.map((j) => j.status),
      ['succeeded', 'invalid', 'invalid', 'invalid', 'invalid', 'invalid'],
    );
    for (const j of jobs.slice(1)) {
      assert.ok(j.error!.length <= MAX_ERROR_CHARS && !j.error!.includes('\n'), j.error!);
      assert.ok(j.reward !== null && j.reward < 0);
    }
    assert.match(jobs[1].error!, /^the proposed spec was not kept, it is over the limits of a job spec: at extra\.a\.a.*: nested more than 16 levels deep$/);
    assert.equal(jobs[1].spec, null);
    assert.match(jobs[2].error!, /^the agent's trace was not kept, it is over the limits of a trace: at deep\.a\.a.*: nested more than 32 levels deep$/);
    assert.deepEqual(jobs[2].spec, good(3), 'the spec is kept when only the trace is refused');
    assert.match(jobs[3].error!, /trace was not kept.*at self: the value contains itself/);
    assert.match(jobs[4].error!, /^line one line two x+…$/);
    assert.equal(jobs[5].failureKind, 'agent-error');
    assert.equal(jobs[5].error, 'the agent failed to propose: null');
    const again = await trainAgent(dir, null, executor, { agent: new RawAgent(script) });
    assert.equal(again.jobs, script.length);
  } finally {
    await executor.close();
  }
});

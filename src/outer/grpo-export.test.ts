import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { parquetReadObjects } from 'hyparquet';
import { Store } from '../store/store.js';
import { arsSpec } from '../testing/specs.js';
import { exportGrpo } from './grpo-export.js';
import type { LlmTrace } from './agents/llm/trace.js';

// `rrl export grpo` splits like `rrl export sft`: the train tasks by default, each row labelled with its task's split.
const TRAIN = 'cartpole-balance';
const HELD_OUT = 'cartpole-short';

/** A run store with one rewarded LLM proposal on a train task and one on a held-out task. */
function llmRun(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-grpo-export-'));
  const store = new Store(dir);
  try {
    store.createRun('run-1', { mode: 'train', agent: 'llm', tasks: [TRAIN, HELD_OUT] });
    store.startIteration('run-1', 0);
    const trace = (task: string): LlmTrace => ({
      kind: 'llm',
      model: 'tiny',
      adapter: null,
      messages: [{ role: 'user', content: `a spec for ${task}` }],
      completion: JSON.stringify(arsSpec(task, 500, 1)),
      logprobs: null,
      turns: [],
      repaired: false,
      error: null,
      sampling: { temperature: 1, topP: 1, maxTokens: 256, n: 1 },
    });
    const ids = store.addJobs(
      'run-1',
      [TRAIN, HELD_OUT].map((task) => ({
        round: 0,
        slot: 0,
        task,
        kind: 'proposal' as const,
        agent: 'llm',
        spec: arsSpec(task, 500, 1),
        trace: trace(task),
      })),
    );
    for (const id of ids) store.finishJob(id, { status: 'succeeded', score: { raw: 10, normalized: 0.2, stderr: 0.01 } });
    store.completeIteration(
      'run-1',
      0,
      ids.map((jobId) => ({ jobId, reward: 0.1, advantage: 0, detail: {}, groupId: `it0/${jobId}` })),
      { agent: 'llm', state: {} },
      { meanReward: 0.1, meanNormalized: 0.2, bestNormalized: 0.2, updateStats: {} },
    );
  } finally {
    store.close();
  }
  return dir;
}

const lines = (path: string): Record<string, unknown>[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('rrl export grpo writes the train tasks by default and labels each row with its task’s split; --split picks another', async () => {
  const run = llmRun();
  const out = mkdtempSync(join(tmpdir(), 'rrl-grpo-out-'));

  const trl = exportGrpo(run, { format: 'trl', out: join(out, 'train.jsonl') });
  assert.equal(trl.rows, 1);
  assert.deepEqual(
    lines(trl.path).map((r) => [r.task, r.split]),
    [[TRAIN, 'train']],
  );
  assert.deepEqual(
    trl.tasks.map((t) => [t.task, t.rows, t.skipped]),
    [
      [TRAIN, 1, null],
      [HELD_OUT, 1, 'split held-out, skipped'],
    ],
  );

  const held = exportGrpo(run, { format: 'verl', out: join(out, 'held-out.parquet'), split: 'held-out' });
  assert.equal(held.rows, 1);
  const buffer = readFileSync(held.path);
  const rows = (await parquetReadObjects({ file: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) })) as {
    extra_info: { split: string; task: string };
  }[];
  assert.deepEqual(
    rows.map((r) => [r.extra_info.task, r.extra_info.split]),
    [[HELD_OUT, 'held-out']],
  );

  // The command line takes the same --split as rrl export sft, and says what it skipped.
  const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'rrl.js');
  const cli = spawnSync(process.execPath, [bin, 'export', 'grpo', run, '--format', 'trl', '--out', join(out, 'cli.jsonl'), '--split', 'held-out'], {
    encoding: 'utf8',
  });
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stderr, new RegExp(`${TRAIN} \\(train\\): 1 row\\(s\\) not written; split train, skipped`));
  assert.deepEqual(
    lines(join(out, 'cli.jsonl')).map((r) => [r.task, r.split]),
    [[HELD_OUT, 'held-out']],
  );
  const bad = spawnSync(process.execPath, [bin, 'export', 'grpo', run, '--format', 'trl', '--out', join(out, 'x.jsonl'), '--split', 'test'], {
    encoding: 'utf8',
  });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--split must be one of train, held-out, example/);
});

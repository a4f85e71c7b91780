import test from 'node:test';
import assert from 'node:assert/strict';
import { getPublicTask } from '../tasks/briefs.js';
import type { TaskBrief } from '../spec/brief.js';
import { arsSpec } from '../testing/specs.js';
import { CompletionBudget, parseProposals, traceOf } from './intake.js';

test('the completion budget counts bytes over a sliding window and says when to retry', () => {
  let now = 0;
  const budget = new CompletionBudget(100, 10_000, () => now);
  assert.deepEqual(budget.admit(['x'.repeat(60)]), { ok: true });
  now = 4_000;
  assert.deepEqual(budget.admit(['é'.repeat(15)]), { ok: true }, '30 bytes of UTF-8');
  now = 5_000;
  const refused = budget.admit(['y'.repeat(20)]);
  assert.equal(refused.ok, false);
  assert.ok(!refused.ok && refused.retryAfterSeconds === 5, 'the first 60 bytes age out at 10 s');
  assert.match(!refused.ok ? refused.message : '', /^too many completion bytes: 90 of 100 taken in the last 10 s, this request has 20; retry in 5 s$/);
  now = 10_000;
  assert.deepEqual(budget.admit(['y'.repeat(20)]), { ok: true });
  now = 100_000;
  assert.deepEqual(budget.admit(['z'.repeat(500)]), { ok: true }, 'a request over the whole budget passes alone');
  assert.equal(budget.admit(['z']).ok, false);
});

test('a trace keeps a valid completion whole and an invalid one cut to 1 KiB with what was dropped', () => {
  const long = 'a'.repeat(5000);
  assert.deepEqual(traceOf(long, { spec: {}, trace: null }), { completion: long });
  assert.deepEqual(traceOf('short', { spec: null, trace: null, rejected: { kind: 'invalid', error: 'x' } }), { completion: 'short' });
  assert.deepEqual(traceOf(long, { spec: null, trace: null, rejected: { kind: 'invalid', error: 'x' } }), {
    completion: `${'a'.repeat(1024)}…[3976 more characters not kept]`,
  });
  const pairs = `${'b'.repeat(1023)}${'😀'.repeat(10)}`;
  assert.equal(
    traceOf(pairs, { spec: null, trace: null, rejected: { kind: 'invalid', error: 'x' } }).completion,
    `${'b'.repeat(1023)}…[20 more characters not kept]`,
    'no half of a surrogate pair',
  );
});

test('completions are parsed and validated in a worker; a worker that fails makes them invalid with its reason', async () => {
  const { brief, baseline } = getPublicTask('cartpole-short');
  const [ok, none, bad, patch, badPatch] = await parseProposals(
    [
      JSON.stringify(arsSpec('cartpole-short')),
      'no spec here',
      JSON.stringify({ ...arsSpec('cartpole-short'), reward: { expression: 'r + foo' } }),
      '{"seed": 9}',
      '{"algorithm": {"learningRate": 5}}',
    ],
    brief,
    baseline,
  );
  assert.equal(ok.rejected, undefined);
  assert.deepEqual(ok.spec, arsSpec('cartpole-short'));
  assert.equal(ok.patch ?? null, null);
  assert.equal(ok.unchanged, false);
  assert.match(none.rejected?.error ?? '', /no JSON object/);
  assert.match(bad.rejected?.error ?? '', /reward\.expression.*foo/);
  // The patch form: applied over the baseline spec, kept as written; a seed alone changes nothing.
  assert.equal(patch.rejected, undefined);
  assert.deepEqual(patch.patch, { seed: 9 });
  assert.equal(patch.unchanged, true);
  assert.match(badPatch.rejected?.error ?? '', /^the patch over the baseline spec gives an invalid spec: .*algorithm\.learningRate/);
  // A parse that throws in the worker (here: a brief without its fields) ...
  const broken = await parseProposals([JSON.stringify(arsSpec('cartpole-short')), 'x'], {} as TaskBrief, null);
  // ... and one past its time limit (the worker is ended and replaced): 256 completions that each take milliseconds, 10 ms allowed.
  const slow = Array.from({ length: 256 }, () => `${'{'.repeat(32)}${'x'.repeat(32_000)}`);
  const late = await parseProposals(slow, brief, baseline, 10);
  for (const [out, kind, n] of [
    [broken, 'error', 2],
    [late, 'timeout', 256],
  ] as const) {
    assert.equal(out.length, n);
    for (const p of out) {
      assert.equal(p.spec, null);
      assert.match(p.rejected?.error ?? '', new RegExp(`^the completion could not be parsed \\(${kind}: .*\\)$`));
    }
  }
  const [again] = await parseProposals(['{"a": 1}'], brief, baseline);
  assert.match(again.rejected?.error ?? '', /./, 'the replaced worker parses the next request');
  assert.doesNotMatch(again.rejected?.error ?? '', /could not be parsed/);
});

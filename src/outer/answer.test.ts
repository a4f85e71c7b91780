import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { getPublicTask } from '../tasks/briefs.js';
import { validateSpec } from '../inner/spec-check.js';
import { controlSpecArb, deepValue, notOneLine, supervisedSpecArb } from '../testing/arbitraries.js';
import { answerPatch, checkAnswer, isFullSpec, proposalFromCompletion, readAnswer } from './answer.js';
import parseCompletions from '../serve/intake-worker.js';

const iris = getPublicTask('iris-species');
const cartpole = getPublicTask('cartpole-short');

/** The validated job a completion stands for over the task's baseline, or its one-line reason. */
function jobOf(text: string, t = iris): { ok: true; spec: unknown; unchanged: boolean; patch: unknown } | { ok: false; error: string } {
  const p = proposalFromCompletion(text, t.baseline);
  if (p.rejected) return { ok: false, error: p.rejected.error };
  const c = checkAnswer(p, t.brief, t.baseline);
  return c.ok ? { ok: true, spec: c.spec, unchanged: c.unchanged, patch: p.patch ?? null } : c;
}

test('an object with a task field is a full spec, any other object a patch', () => {
  assert.equal(isFullSpec({ task: 'x' }), true);
  assert.equal(isFullSpec({ algorithm: {} }), false);
  assert.equal(isFullSpec({}), false);
  const full = readAnswer(iris.baseline, iris.baseline);
  assert.deepEqual(full, { ok: true, spec: iris.baseline, patch: null });
  const none = readAnswer({ seed: 3 }, null);
  assert.equal(none.ok, false);
  assert.match(!none.ok ? none.error : '', /patch.*no baseline spec/);
});

test('for any spec S, the patch between the baseline and S gives the same job as S written in full', () => {
  for (const [t, arb] of [
    [iris, supervisedSpecArb(iris.brief)],
    [cartpole, controlSpecArb(cartpole.brief)],
  ] as const) {
    fc.assert(
      fc.property(arb, (spec) => {
        const full = jobOf(JSON.stringify(spec), t);
        const patched = jobOf(JSON.stringify(answerPatch(t.baseline, spec)), t);
        // The generators may make a spec the brief refuses (a constant that is not finite): both forms refuse it then.
        assert.equal(patched.ok, full.ok, !patched.ok ? patched.error : '');
        if (full.ok && patched.ok) {
          assert.deepEqual(patched.spec, full.spec);
          assert.equal(patched.unchanged, full.unchanged);
          assert.equal(full.patch, null);
        }
      }),
      { numRuns: 40 },
    );
  }
});

test('an empty patch and a patch of the seed alone are the baseline, unchanged; a real edit is not', () => {
  for (const text of ['{}', '{"seed": 12345}', 'Sure: ```json\n{"seed": 7}\n```']) {
    const r = jobOf(text);
    assert.ok(r.ok && r.unchanged, text);
  }
  const empty = jobOf('{}');
  assert.deepEqual(empty.ok && empty.patch, {});
  const lr = jobOf('{"algorithm": {"learningRate": 0.003}, "dataset": {"sources": [{"id": "clean-small", "weight": 1}]}}');
  assert.ok(lr.ok && !lr.unchanged);
  // The full baseline spec is unchanged too.
  const base = jobOf(JSON.stringify(iris.baseline));
  assert.ok(base.ok && base.unchanged && base.patch === null);
});

test('a patch that makes an invalid spec says so, naming the field; a full spec of another task is refused as today', () => {
  const bad = jobOf('{"algorithm": {"learningRate": 50}}');
  assert.equal(bad.ok, false);
  assert.match(!bad.ok ? bad.error : '', /^the patch over the baseline spec gives an invalid spec: .*algorithm\.learningRate/);
  const removed = jobOf('{"algorithm": null}');
  assert.match(!removed.ok ? removed.error : '', /patch.*algorithm/);
  const other = jobOf(JSON.stringify(cartpole.baseline));
  assert.equal(other.ok, false);
  assert.match(!other.ok ? other.error : '', /task/);
  assert.doesNotMatch(!other.ok ? other.error : '', /patch/);
});

test('hostile patches become one-line invalid reasons, never crashes', () => {
  const hostile = [
    JSON.stringify(deepValue(40)),
    JSON.stringify({ dataset: { sources: Array.from({ length: 5000 }, () => ({ id: 'clean-small', weight: 1 })) } }),
    '{"__proto__": {"task": "iris-species"}}',
    '{"model": {"constructor": {"prototype": 1}}}',
    JSON.stringify({ environment: { ['k'.repeat(300)]: 1 } }),
  ];
  for (const text of hostile) {
    const r = jobOf(text);
    assert.equal(r.ok, false, text.slice(0, 60));
    if (!r.ok) assert.equal(notOneLine(r.error, 2000), null);
  }
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
      const r = jobOf(JSON.stringify({ algorithm: value }));
      if (!r.ok) assert.equal(notOneLine(r.error, 2000), null);
    }),
    { numRuns: 100 },
  );
});

test('the intake worker reads both forms and says which jobs are unchanged', () => {
  const [patch, same, full, bad] = parseCompletions({
    completions: ['{"model": {"hidden": [16]}}', '{"seed": 2}', JSON.stringify(iris.baseline), '{"dataset": {"sources": []}}'],
    brief: iris.brief,
    baseline: iris.baseline,
  });
  assert.deepEqual([patch.rejected, patch.unchanged, patch.patch], [undefined, false, { model: { hidden: [16] } }]);
  assert.equal(validateSpec(patch.spec, iris.brief).ok, true);
  assert.deepEqual([same.unchanged, full.unchanged, full.patch ?? null], [true, true, null]);
  assert.match(bad.rejected?.error ?? '', /^the patch over the baseline spec gives an invalid spec: .*dataset\.sources/);
});

test('a patch of fields the job type ignores is the baseline, unchanged, in the answer path and the serve intake (issue 42)', () => {
  // Control jobs never read dropout, input noise, mixup or label smoothing; supervised adam jobs never read momentum.
  const inert = [
    [cartpole, '{"model":{"dropout":0.5}}'],
    [cartpole, '{"environment":{"inputNoise":0.3,"mixup":0.2},"reward":{"labelSmoothing":0.1,"weight":"x"},"dataset":{"bcEpochs":7}}'],
    [iris, '{"algorithm":{"momentum":0.5},"reward":{"huberDelta":3},"environment":{"numEnvs":2},"budget":{"stopWhenFlat":true}}'],
    // iris's baseline is a linear model (hidden []): dropout has no hidden layer to act on.
    [iris, '{"model":{"dropout":0.5}}'],
  ] as const;
  for (const [t, text] of inert) {
    const r = jobOf(text, t);
    assert.ok(r.ok && r.unchanged, `${t.brief.id}: ${text}`);
    const [p] = parseCompletions({ completions: [text], brief: t.brief, baseline: t.baseline });
    assert.equal(p.unchanged, true, `intake: ${text}`);
  }
  // The same fields where the job reads them are a change.
  for (const text of ['{"environment":{"inputNoise":0.3}}', '{"reward":{"labelSmoothing":0.1}}']) {
    const r = jobOf(text, iris);
    assert.ok(r.ok && !r.unchanged, text);
  }
});

test('a patch naming another algorithm replaces the algorithm section; the same name merges field by field', () => {
  const dqnAlgorithm = {
    name: 'dqn',
    learningRate: 0.0005,
    gamma: 0.99,
    bufferSize: 10000,
    batchSize: 64,
    learningStarts: 500,
    trainFrequency: 4,
    targetUpdateInterval: 500,
    explorationFraction: 0.2,
    explorationFinal: 0.05,
  };
  const dqn = jobOf(JSON.stringify({ algorithm: dqnAlgorithm }), cartpole);
  assert.ok(dqn.ok, !dqn.ok ? dqn.error : '');
  const ref = validateSpec({ ...(cartpole.baseline as object), algorithm: dqnAlgorithm }, cartpole.brief);
  assert.ok(ref.ok);
  assert.deepEqual(dqn.ok && dqn.spec, ref.spec);
  const bare = jobOf('{"algorithm": {"name": "dqn"}}', cartpole);
  assert.ok(!bare.ok && /algorithm\.learningRate: missing/.test(bare.error), 'the PPO fields are not carried into DQN; its own are named');
  const lr = jobOf('{"algorithm": {"name": "ppo", "learningRate": 0.0005}}', cartpole);
  assert.ok(lr.ok && (lr.spec as { algorithm: { clip: number } }).algorithm.clip === (cartpole.baseline as { algorithm: { clip: number } }).algorithm.clip);
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '../../inner/train.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { arsSpec, cleanRlPpoSpec } from '../../testing/specs.js';
import { dataForJob, scoreArtifact } from './hidden-score.js';
import { Scorer } from './scorer-pool.js';

// The held-out episodes and rows depend on the secret: these tests use their own.
process.env.RRL_EVAL_SECRET = 'scorer-test-secret';
const tmp = mkdtempSync(join(tmpdir(), 'rrl-scorer-'));

/** Trains a spec here and returns its artifact directory. */
async function trained(task: string, spec: unknown, name: string): Promise<string> {
  const dir = join(tmp, name);
  await runJob(spec, getPublicTask(task).brief, { outDir: dir, data: dataForJob(task, spec) });
  return dir;
}

/** A copy of an artifact with one file rewritten. */
function tampered(dir: string, name: string, file: string, edit: (text: string) => string): string {
  const out = join(tmp, name);
  cpSync(dir, out, { recursive: true });
  writeFileSync(join(out, file), edit(readFileSync(join(out, file), 'utf8')));
  return out;
}

test('a real control artifact is scored in the scorer thread with a deterministic standard error, as in this thread', async () => {
  const dir = await trained('cartpole-balance', arsSpec('cartpole-balance', 2_000), 'cartpole');
  const scorer = new Scorer({ workers: 1 });
  try {
    const a = await scorer.score('cartpole-balance', dir);
    const b = await scorer.score('cartpole-balance', dir);
    assert.ok(a.ok && b.ok, JSON.stringify(a));
    if (!a.ok || !b.ok) return;
    assert.deepEqual(a.score, b.score);
    assert.deepEqual(a.score, scoreArtifact('cartpole-balance', dir), 'the worker scores under the same secret as this thread');
    assert.ok(a.score.stderr !== null && a.score.stderr >= 0 && Number.isFinite(a.score.stderr));
  } finally {
    await scorer.close();
  }
});

test('attack 3: a policy.json of the wrong shape or unreadable is a score-error naming the file, and the scorer goes on', async () => {
  const dir = await trained('cartpole-balance', arsSpec('cartpole-balance', 1_000), 'cartpole-small');
  const cases: [string, (t: string) => string, RegExp][] = [
    ['no-layers', (t) => JSON.stringify({ ...JSON.parse(t), layers: 'none' }), /policy\.json: "layers" must be an array/],
    [
      'obs-dim',
      (t) => JSON.stringify({ ...JSON.parse(t), obsDim: 3, layers: [{ in: 3, out: 2, weights: [0, 0, 0, 0, 0, 0], bias: [0, 0] }] }),
      /obsDim is 3, the environment observes 4/,
    ],
    [
      'weights',
      (t) =>
        JSON.stringify({
          ...JSON.parse(t),
          layers: (JSON.parse(t) as { layers: { weights: unknown[] }[] }).layers.map((l) => ({ ...l, weights: l.weights.map(() => 'x') })),
        }),
      /not a finite number/,
    ],
    ['truncated', (t) => t.slice(0, t.length / 2), /policy\.json: .*JSON/],
  ];
  const scorer = new Scorer({ workers: 1 });
  try {
    for (const [name, edit, expected] of cases) {
      const r = await scorer.score('cartpole-balance', tampered(dir, name, 'policy.json', edit));
      assert.equal(r.ok, false, name);
      if (r.ok) continue;
      assert.equal(r.kind, 'score-error', name);
      assert.match(r.error, expected, name);
      assert.match(r.error, /^scoring: [^\n]+$/, 'one line');
    }
    const after = await scorer.score('cartpole-balance', dir);
    assert.ok(after.ok, 'the next artifact scores normally');
  } finally {
    await scorer.close();
  }
});

test('attack 3: an evaluation command that exits non-zero is a score-error; a working one reports a standard error from its rows', async () => {
  const { baseline } = getPublicTask('iris-command');
  const spec = { ...baseline, dataset: { ...(baseline.dataset as object), sources: [{ id: 'clean-small', weight: 1 }] } };
  const dir = await trained('iris-command', spec, 'iris-command');
  const scorer = new Scorer({ workers: 1 });
  try {
    const good = await scorer.score('iris-command', dir);
    assert.ok(good.ok, JSON.stringify(good));
    if (good.ok) assert.ok(good.score.stderr !== null && good.score.stderr > 0, `stderr ${good.score.stderr}`);
    const broken = tampered(dir, 'iris-command-bad', 'weights.json', (t) => JSON.stringify({ ...JSON.parse(t), format: 'something-else' }));
    const bad = await scorer.score('iris-command', broken);
    assert.equal(bad.ok, false);
    if (!bad.ok) {
      assert.equal(bad.kind, 'score-error');
      assert.match(bad.error, /^scoring: evaluation command exited with code 1: .*unknown format "something-else"/);
    }
  } finally {
    await scorer.close();
  }
});

test('attack 3: a scoring that exceeds its time limit is a score-timeout while the harness stays responsive', async () => {
  // Eight env steps of acrobot with two layers of 512 train in a second and take several seconds to
  // score (30 held-out episodes × 500 steps through the wide network: 8 GFLOP, within the scoring cap
  // that refuses the attack's four layers at validation, compute-estimate.ts).
  const base = cleanRlPpoSpec('acrobot-swingup', 8);
  const spec = {
    ...base,
    environment: { params: {}, wrappers: [], numEnvs: 1 },
    model: { hidden: [512, 512], activation: 'tanh' },
    algorithm: { ...base.algorithm, rolloutSteps: 8, minibatches: 1, epochs: 1 },
  };
  const dir = await trained('acrobot-swingup', spec, 'acrobot-heavy');
  const scorer = new Scorer({ workers: 1 });
  let ticks = 0;
  const timer = setInterval(() => (ticks += 1), 20);
  try {
    const r = await scorer.score('acrobot-swingup', dir, { timeoutMs: 1_000 });
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.kind, 'score-timeout');
      assert.match(r.error, /^scoring: exceeded the wall-clock limit of 1\.0 s$/);
    }
    assert.ok(ticks > 0, 'the event loop ran while the artifact was being scored');
    const small = await trained('acrobot-swingup', { ...spec, model: { hidden: [], activation: 'tanh' } }, 'acrobot-small');
    const next = await scorer.score('acrobot-swingup', small);
    assert.equal(next.ok, true, `the replaced worker scores the next artifact: ${JSON.stringify(next)}`);
  } finally {
    clearInterval(timer);
    await scorer.close();
  }
});

test('attack 3: a model.json of the wrong shape is a score-error; a scorer whose heap runs out is a score-out-of-memory', async () => {
  const { baseline } = getPublicTask('iris-species');
  const dir = await trained('iris-species', baseline, 'iris-model');
  const scorer = new Scorer({ workers: 1 });
  try {
    // An iris model (4 features) handed to the penguins evaluation (8 features).
    const r = await scorer.score('penguins-species', dir);
    assert.deepEqual(r.ok ? null : [r.kind, r.error], ['score-error', 'scoring: model.json: the model reads 4 columns, the task has 8']);
    assert.equal((await scorer.score('iris-species', dir)).ok, true);
  } finally {
    await scorer.close();
  }
  // A 2 MB heap cannot even hold the hidden evaluation's data.
  const tiny = new Scorer({ workers: 1, memoryMb: 2 });
  try {
    const r = await tiny.score('iris-species', dir);
    assert.deepEqual(r.ok ? null : [r.kind, r.error], ['score-out-of-memory', "scoring: ran out of memory: the worker's heap limit of 2 MB was reached"]);
  } finally {
    await tiny.close();
  }
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobMemoryCapMb } from '../spec/brief.js';
import type { JobSpecInput } from '../spec/schema.js';
import { parseSpec } from '../spec/validate.js';
import { getPublicTask, listTasks } from '../tasks/briefs.js';
import { REFERENCE_SPECS } from '../tasks/reference-specs.js';
import { WORK_MARGIN, estimateCompute, netShape } from './compute-estimate.js';
import { SCORER_LIMIT_S, SCORING_CAP_FLOPS, estimateScoring } from './scoring-estimate.js';
import { SCORER_DEFAULTS } from '../outer/scoring/scorer-pool.js';
import { FAMILIES, registerFamilyTasks } from '../tasks/families/index.js';
import { getSupervisedEvaluation } from '../tasks/hidden.js';
import { registerTaskDir } from '../tasks/file/register.js';
import { fileURLToPath } from 'node:url';
import type { TaskBrief } from '../spec/brief.js';
import { fusedMemoryBytes } from './nn/mlp.js';
import { runJob } from './train.js';
import { validateSpec } from './spec-check.js';

const cartpole = getPublicTask('cartpole-balance');

/** The cartpole baseline with some fields replaced. */
function cartpoleSpec(patch: (s: Record<string, Record<string, unknown>>) => void): JobSpecInput {
  const s = structuredClone(cartpole.baseline) as unknown as Record<string, Record<string, unknown>>;
  patch(s);
  return s as unknown as JobSpecInput;
}

/** Attack 1 of issue 10: PPO whose single minibatch of ~100k rows through [512, 1, 512, 1] grew a worker to 4.2 GB. */
const attack1 = cartpoleSpec((s) => {
  s.environment.numEnvs = 64;
  s.algorithm.rolloutSteps = 1562;
  s.algorithm.minibatches = 1;
  s.model.hidden = [512, 1, 512, 1];
});

test('netShape counts parameters, multiply-adds and units of an MLP', () => {
  assert.deepEqual(netShape([4, 64, 64, 2]), { params: 4 * 64 + 64 + 64 * 64 + 64 + 64 * 2 + 2, macs: 4 * 64 + 64 * 64 + 64 * 2, units: 64 + 64 + 2 });
  assert.deepEqual(netShape([3, 2]), { params: 8, macs: 6, units: 2 });
});

test('every baseline and reference spec passes, well inside the caps', () => {
  const specs: [string, JobSpecInput][] = [
    ...listTasks().map((t): [string, JobSpecInput] => [t.brief.id, t.baseline]),
    ...Object.entries(REFERENCE_SPECS).map(([id, r]): [string, JobSpecInput] => [id, r.spec()]),
  ];
  assert.ok(specs.length >= 20);
  for (const [id, input] of specs) {
    const brief = getPublicTask(id).brief;
    const checked = validateSpec(input, brief);
    assert.ok(checked.ok, `${id}: ${checked.ok ? '' : checked.error.message}`);
    const e = estimateCompute(checked.spec, brief);
    assert.ok(e.params > 0 && e.flops > 0 && e.memoryBytes > 0, id);
    // Far from refusal: a tenth of the memory cap, a tenth of the work the wall cap allows.
    assert.ok(e.memoryBytes < 0.1 * jobMemoryCapMb(brief) * 2 ** 20, `${id}: ${e.memoryBytes} bytes`);
    assert.ok(e.seconds < 0.1 * WORK_MARGIN * brief.budget.maxWallSeconds, `${id}: ${e.seconds} s`);
  }
});

test('attack 1 (PPO, one minibatch of 99,968 rows through [512, 1, 512, 1]) is refused on memory, naming model.hidden', () => {
  const checked = validateSpec(attack1, cartpole.brief);
  assert.equal(checked.ok, false);
  if (checked.ok) return;
  assert.equal(checked.error.issues.length, 1, checked.error.message);
  const issue = checked.error.issues[0];
  assert.equal(issue.path, 'model.hidden');
  assert.match(issue.message, /needs about \d+\.\d GB of memory/);
  assert.match(issue.message, /minibatch of 99,968 rows \(environment\.numEnvs 64 × algorithm\.rolloutSteps 1562 \/ algorithm\.minibatches 1\)/);
  assert.match(issue.message, /over the task's cap of 1,024 MB/);
  // The same spec with 64 minibatches fits.
  const split = cartpoleSpec((s) => {
    Object.assign(s.environment, { numEnvs: 64 });
    Object.assign(s.algorithm, { rolloutSteps: 1562, minibatches: 64 });
    s.model.hidden = [512, 1, 512, 1];
  });
  const ok = validateSpec(split, cartpole.brief);
  assert.ok(ok.ok, ok.ok ? '' : ok.error.message);
});

test('DQN with 16 gradient steps of batch 1024 every env step over 100k steps is refused on work, naming algorithm.gradientSteps', () => {
  const dqn = (gradientSteps: number, batchSize: number): JobSpecInput =>
    cartpoleSpec((s) => {
      s.environment = { numEnvs: 1 };
      s.algorithm = {
        name: 'dqn',
        learningRate: 1e-3,
        gamma: 0.99,
        bufferSize: 100_000,
        batchSize,
        learningStarts: 1000,
        trainFrequency: 1,
        gradientSteps,
        targetUpdateInterval: 500,
        explorationFraction: 0.1,
        explorationFinal: 0.05,
      };
    });
  const checked = validateSpec(dqn(16, 1024), cartpole.brief);
  assert.equal(checked.ok, false);
  if (checked.ok) return;
  const issue = checked.error.issues[0];
  assert.equal(issue.path, 'algorithm.gradientSteps');
  assert.match(issue.message, /1,584,000 gradient steps .* of algorithm\.batchSize 1024 rows/);
  assert.match(issue.message, /wall-clock cap of 300 s/);
  // An ordinary DQN (one gradient step of 64 rows per env step) passes.
  const plain = validateSpec(dqn(1, 64), cartpole.brief);
  assert.ok(plain.ok, plain.ok ? '' : plain.error.message);
});

test('the widest supervised model at the largest batch fits; a REINFORCE update of 64,000 rows through [512 × 4] is refused', () => {
  const seattle = getPublicTask('seattle-weather');
  const wide = structuredClone(seattle.baseline) as unknown as Record<string, Record<string, unknown>>;
  wide.model = { hidden: [512, 512, 512, 512], activation: 'relu' };
  wide.algorithm = { ...wide.algorithm, batchSize: 4096 };
  wide.dataset = { ...wide.dataset, size: 100_000 };
  const checked = validateSpec(wide, seattle.brief);
  // 4096 rows × 2,000+ units × 6 tensors is ~200 MB: that fits; the 10,000-row validation forward does too.
  assert.ok(checked.ok, checked.ok ? '' : checked.error.message);
  const reinforce = cartpoleSpec((s) => {
    s.environment.numEnvs = 64;
    s.model.hidden = [512, 512, 512, 512];
    s.algorithm = { name: 'reinforce', learningRate: 1e-3, gamma: 0.99, episodesPerUpdate: 64 };
  });
  const r = validateSpec(reinforce, cartpole.brief);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.error.issues[0].path, 'model.hidden');
    assert.match(r.error.issues[0].message, /updates of up to 64,000 rows/);
  }
});

test("the memory estimate covers the WebAssembly memory a real PPO job's networks take, without overshooting it wildly", async () => {
  // The fused engine's allocations only grow, so the difference is this job's networks.
  const before = fusedMemoryBytes();
  const input = cartpoleSpec((s) => {
    s.environment.numEnvs = 16;
    Object.assign(s.algorithm, { rolloutSteps: 128, minibatches: 1, epochs: 1 });
    s.model.hidden = [256, 256];
    s.budget.envSteps = 2048;
  });
  const dir = mkdtempSync(join(tmpdir(), 'rrl-compute-'));
  try {
    await runJob(input, cartpole.brief, { outDir: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const grown = fusedMemoryBytes() - before;
  const parsed = parseSpec(input);
  assert.ok(parsed.ok);
  const estimate = estimateCompute(parsed.spec, cartpole.brief).memoryBytes;
  assert.ok(grown > 0, 'the job allocated no network memory');
  assert.ok(estimate >= grown, `estimate ${estimate} < measured growth ${grown}`);
  assert.ok(estimate <= 4 * grown, `estimate ${estimate} > 4 × measured growth ${grown}`);
});

test("scoring cost: the estimate in FLOPs and the cap under the scorer's limit (issue 42)", () => {
  assert.equal(SCORER_LIMIT_S * 1000, SCORER_DEFAULTS.timeoutMs, "the scorer's limit the cap is set under");
  assert.equal(SCORING_CAP_FLOPS, 15e9);
  const acrobot = getPublicTask('acrobot-swingup');
  assert.deepEqual(acrobot.brief.evaluation, { episodes: 30 });
  const wide = structuredClone(acrobot.baseline) as unknown as Record<string, Record<string, unknown>>;
  wide.model = { hidden: [512, 512, 512, 512], activation: 'tanh' };
  const spec = parseSpec(wide);
  assert.ok(spec.ok);
  // Acrobot: 6 observations, 3 actions, at most 500 steps; 791,040 multiply-adds, 2,048 hidden units, 6 inputs normalised.
  const e = estimateScoring(spec.spec, acrobot.brief)!;
  assert.equal(e.forwards, 30 * 500);
  assert.equal(e.flopsPerForward, 2 * 791_040 + 2_048 + 3 * 6);
  assert.equal(e.flops, 30 * 500 * 1_584_146);
  const r = validateSpec(wide, acrobot.brief);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.error.issues.length, 1);
    assert.match(
      r.error.message,
      /^model\.hidden: got \[512,512,512,512\]: scoring the model on the hidden evaluation needs about 23\.8 GFLOP, over the cap of 15 GFLOP/,
    );
  }
  // Two layers of 512 score in 8 GFLOP: within the cap.
  wide.model = { hidden: [512, 512], activation: 'tanh' };
  assert.ok(validateSpec(wide, acrobot.brief).ok);
  // Supervised: test rows × a forward pass with the standardisation (iris: 4 features, 3 classes, 45 test rows).
  const iris = getPublicTask('iris-species');
  assert.deepEqual(iris.brief.evaluation, { rows: 45 });
  const irisSpec = parseSpec({ ...iris.baseline, model: { hidden: [16], activation: 'relu' } });
  assert.ok(irisSpec.ok);
  assert.equal(estimateScoring(irisSpec.spec, iris.brief)!.flops, 45 * (2 * (4 * 16 + 16 * 3) + 16 + 3 * 4));
  // A task trained by an outside program scores its own model: not estimated.
  assert.equal(estimateScoring(irisSpec.spec, getPublicTask('iris-command').brief), null);
});

test("every built-in task, one draw of every family and the examples validate; briefs state the hidden evaluation's true size", async () => {
  const own = await registerTaskDir(fileURLToPath(new URL('../../../examples/own-task/', import.meta.url)));
  const drawn = Object.keys(FAMILIES).flatMap((f) => registerFamilyTasks(f, 1, 11));
  assert.equal(drawn.length, Object.keys(FAMILIES).length);
  const briefs: [TaskBrief, unknown][] = listTasks().map((t): [TaskBrief, unknown] => [t.brief, t.baseline]);
  for (const t of [...own.map((o) => o.task), ...drawn.map((d) => d.def)])
    assert.ok(
      briefs.some(([b]) => b.id === t.id),
      `${t.id} is listed`,
    );
  for (const [brief, baseline] of briefs) {
    const r = validateSpec(baseline, brief);
    assert.ok(r.ok, `${brief.id}: ${r.ok ? '' : r.error.message}`);
    if (brief.kind === 'control') assert.ok(Number.isInteger(brief.evaluation.episodes), `${brief.id} states its episodes`);
    else assert.ok(Number.isInteger(brief.evaluation.rows), `${brief.id} states its test rows`);
    const scoring = estimateScoring(r.spec, brief);
    if (scoring) assert.ok(scoring.flops < SCORING_CAP_FLOPS / 10, `${brief.id}: baseline scoring ${scoring.flops} FLOPs, far under the cap`);
  }
  // The rows a supervised brief states are the hidden test set's (built-in tasks and the user's task file).
  for (const t of listTasks().filter((x) => x.brief.kind === 'supervised')) {
    assert.equal(getSupervisedEvaluation(t.brief.id).heldOut().test.y.length, t.brief.evaluation.rows, t.brief.id);
  }
});

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

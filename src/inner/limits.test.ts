import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { TaskBrief } from '../spec/brief.js';
import { JobSpecSchema } from '../spec/schema.js';
import { getPublicTask } from '../tasks/briefs.js';
import { dataForJob } from '../outer/scoring/hidden-score.js';
import { getEnvironment } from './envs/index.js';
import { StepCapError } from './envs/wrappers.js';
import { MemoryLimitError, TimeLimitError, engineFailureKind, errorKind } from './errors.js';
import { JobLimits } from './limits.js';
import { FusedMlp } from './nn/mlp.js';
import { controlContext, runJob } from './train.js';
import { heavyDqnSpec } from '../testing/specs.js';

const tmp = mkdtempSync(join(tmpdir(), 'rrl-limits-'));
const cartpole = getPublicTask('cartpole-balance').brief;
const withBudget = (brief: TaskBrief, budget: Partial<TaskBrief['budget']>): TaskBrief => ({ ...brief, budget: { ...brief.budget, ...budget } });
const status = (dir: string): { status: string; kind: string; error: string } => JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8'));

test('the wall-clock cap throws TimeLimitError once the deadline has passed, naming the field', () => {
  const limits = new JobLimits({ wallSeconds: 0.5, memoryMb: 1024 }, performance.now() - 1000);
  assert.throws(
    () => limits.check(),
    (e: Error) =>
      e instanceof TimeLimitError &&
      e.kind === 'timeout' &&
      /^budget\.maxWallSeconds: the job ran 1\.0 s, past the task's wall-clock cap of 0\.5 s$/.test(e.message),
  );
  new JobLimits({ wallSeconds: 3600, memoryMb: 1024 }).check();
});

test('the memory cap counts the networks a job adds and throws MemoryLimitError with the numbers', () => {
  const limits = new JobLimits({ wallSeconds: 3600, memoryMb: 4 });
  limits.checkMemory();
  const big = new FusedMlp([8, 256, 256, 2], 'tanh', 1024); // about 6 MB of WebAssembly memory
  assert.ok(limits.memoryUse().tensors >= 6 * 2 ** 20, `tensors ${limits.memoryUse().tensors} for a net of ${big.sizes.join('-')}`);
  new JobLimits({ wallSeconds: 3600, memoryMb: 4 }).checkMemory(); // a job that starts after the network exists is not charged for it
  assert.throws(
    () => limits.checkMemory(),
    (e: Error) =>
      e instanceof MemoryLimitError &&
      e.kind === 'out-of-memory' &&
      /^budget\.maxMemoryMb: the job's memory reached [\d.]+ MB \(tensors [\d.]+ MB, JS heap [\d.]+ MB\), past the task's cap of 4 MB$/.test(e.message),
  );
});

test('failure kinds survive the trip through a worker as the "Name: message" text', () => {
  assert.equal(engineFailureKind('TimeLimitError: budget.maxWallSeconds: the job ran 2.0 s'), 'timeout');
  assert.equal(engineFailureKind('MemoryLimitError: budget.maxMemoryMb: the job reached 9 MB'), 'out-of-memory');
  assert.equal(engineFailureKind('NaNError: ppo loss became NaN'), 'nan');
  assert.equal(engineFailureKind('RangeError: TimeLimitError: no'), 'error');
  assert.equal(engineFailureKind('budget.envSteps (3) is smaller than environment.numEnvs (4)'), 'error');
  assert.equal(errorKind(new TimeLimitError('x')), 'timeout');
  assert.equal(errorKind(new Error('x')), 'error');
});

test('the DQN attack of issue 10 is refused before it runs, naming the field and the numbers', async () => {
  const dir = join(tmp, 'dqn-attack');
  const tooMuch = /^algorithm\.gradientSteps: got 16: the job's work cannot finish within the task's wall-clock cap of 300 s: 1,598,400 gradient steps/;
  await assert.rejects(runJob(heavyDqnSpec(), cartpole, { outDir: dir }), (e: Error) => e.name === 'SpecError' && tooMuch.test(e.message));
  assert.equal(status(dir).kind, 'invalid');
});

test('a job that reaches the wall-clock cap while training ends as a timeout, and status.json says so', async () => {
  // The job's clock started 299.5 s ago (as when an executor took it and loading was slow): half a
  // second of training is left before the task's 300 s cap.
  const dir = join(tmp, 'dqn-timeout');
  const startedAt = Date.now() - 299_500;
  await assert.rejects(
    runJob({ ...heavyDqnSpec(), algorithm: { ...heavyDqnSpec().algorithm, gradientSteps: 1, batchSize: 64 } }, cartpole, { outDir: dir, startedAt }),
    (e: Error) => e.name === 'TimeLimitError' && /past the task's wall-clock cap of 300 s/.test(e.message),
  );
  const s = status(dir);
  assert.equal(s.status, 'failed');
  assert.equal(s.kind, 'timeout');
  assert.match(s.error, /^budget\.maxWallSeconds: the job ran 3\d\d\.\d s, past the task's wall-clock cap of 300 s$/);
});

test('a spec whose estimated memory passes the cap is refused before it runs, with the numbers', async () => {
  const brief = withBudget(cartpole, { maxMemoryMb: 4 });
  const dir = join(tmp, 'dqn-memory');
  await assert.rejects(
    runJob(heavyDqnSpec([512, 512, 512, 512]), brief, { outDir: dir }),
    (e: Error) => e.name === 'SpecError' && /the job needs about [\d.]+ MB of memory, over the task's cap of 4 MB/.test(e.message),
  );
  assert.equal(status(dir).kind, 'invalid');
});

test("supervised training checks the engine's caps at its minibatches", async () => {
  const { brief, baseline } = getPublicTask('iris-species');
  const dir = join(tmp, 'supervised-timeout');
  const startedAt = Date.now() - (brief.budget.maxWallSeconds + 1) * 1000;
  await assert.rejects(runJob(baseline, brief, { outDir: dir, data: dataForJob('iris-species', baseline), startedAt }), TimeLimitError);
  assert.equal(status(dir).kind, 'timeout');
});

test('an algorithm that asks for more env steps than the budget gets none of them', () => {
  const spec = JobSpecSchema.parse({ ...heavyDqnSpec(), environment: { numEnvs: 3 }, budget: { envSteps: 10 } });
  const { ctx, counter } = controlContext(spec, cartpole, { env: getEnvironment('CartPole-v1'), maxEnvSteps: 10, limits: { check: () => {} } });
  const env = ctx.makeEnv(3);
  const other = ctx.makeEnv(2);
  const greedy = (): void => {
    for (;;) env.step([0, 1, 0]); // never looks at canStep()
  };
  assert.throws(greedy, StepCapError);
  assert.equal(counter.used, 9);
  assert.throws(() => other.step([1, 1]), StepCapError, 'a second env shares the spent budget');
  assert.equal(counter.used, 9);
  assert.throws(() => ctx.makeEnv(11), /budget\.envSteps \(10\) is smaller than environment\.numEnvs \(11\)/);
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '../../inner/train.js';
import { scoreArtifact } from '../../outer/score.js';
import { getPublicTask } from '../briefs.js';
import { TaskFileError, loadTaskFile } from './load.js';
import { registerTaskDir } from './register.js';

const tmp = mkdtempSync(join(tmpdir(), 'rrl-control-file-'));
const cartpole = (id: string, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  title: 'Balance a pole on a cart',
  description: 'Push the cart left or right so that the pole stays upright for as long as possible.',
  kind: 'control',
  variables: { x: 'cart position (m)', v: 'cart velocity (m/s)', theta: 'pole angle (rad)', omega: 'pole angular velocity (rad/s)' },
  environment: { gymnasium: 'CartPole-v1' },
  caps: { maxEnvSteps: 20_000, maxWallSeconds: 120 },
  ...over,
});

test('a Gymnasium task file loads through the bridge, trains through it and is scored on held-out episodes', async () => {
  const dir = join(tmp, 'ok');
  mkdirSync(dir);
  writeFileSync(join(dir, 'my-cartpole.json'), JSON.stringify(cartpole('my-cartpole')));
  await registerTaskDir(dir);
  const { brief, baseline } = getPublicTask('my-cartpole');
  assert.equal(brief.kind, 'control');
  assert.equal(brief.environment?.gymnasium?.id, 'CartPole-v1');
  assert.deepEqual(brief.environment?.observation.map((v) => v.name), ['x', 'v', 'theta', 'omega']);
  assert.equal(brief.environment?.gymnasium?.maxEpisodeSteps, 500); // from the environment's own time limit
  assert.equal(baseline.budget?.envSteps, 10_000); // half the cap
  const a = await runJob({ ...baseline, budget: { envSteps: 4096 } }, brief, { outDir: join(tmp, 'job') });
  assert.equal(a.cost.envSteps, 4096);
  const s = scoreArtifact('my-cartpole', a.dir);
  assert.ok(Number.isFinite(s.raw) && s.raw >= 8 && s.raw <= 500, `hidden mean return ${s.raw}`);
});

test('a Gymnasium task file with an unknown id or misnamed variables gets one line naming the field', async () => {
  const dir = join(tmp, 'bad');
  mkdirSync(dir);
  const problems = async (task: Record<string, unknown>): Promise<string[]> => {
    writeFileSync(join(dir, `${task.id as string}.json`), JSON.stringify(task));
    try {
      await loadTaskFile(join(dir, `${task.id as string}.json`), dir);
    } catch (err) {
      assert.ok(err instanceof TaskFileError, String(err));
      return err.problems;
    }
    return assert.fail('the task file loaded');
  };
  const unknown = await problems(cartpole('no-such', { environment: { gymnasium: 'NoSuchEnvironment-v0' } }));
  assert.equal(unknown.length, 1);
  assert.match(unknown[0], /^environment\.gymnasium: .*NoSuchEnvironment-v0/);
  assert.ok(!unknown[0].includes('\n'));
  const three = await problems(cartpole('three-vars', { variables: { x: 'a', v: 'b', theta: 'c' } }));
  assert.deepEqual(three, ['variables: 3 given for 4 observation values; name every value, in order, or none']);
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordDemonstrations, standardDemos } from './demos.js';
import { runJob } from '../../inner/train.js';
import { getPublicTask } from '../briefs.js';
import { dataForJob, scoreArtifact } from '../../outer/scoring/hidden-score.js';
import { validateSpec } from '../../inner/spec-check.js';

const [expert, operator, random] = standardDemos('driving');

test('demonstration sets are what the catalog says: controller episodes, some random, all random', () => {
  const e = recordDemonstrations('MountainCar-v0', expert, 1);
  assert.ok(e.obs.length < 3 * 200, 'the controller reaches the flag before the time limit');
  assert.ok(
    e.actions.every((a) => a === 0 || a === 2),
    'the controller only pushes',
  );
  const r = recordDemonstrations('MountainCar-v0', random, 1);
  assert.equal(r.obs.length, 30 * 200, 'random inputs never reach the flag in 200 steps');
  const counts = [0, 0, 0];
  for (const a of r.actions) counts[a]++;
  for (const c of counts) assert.ok(c > r.actions.length * 0.25);
  const o = recordDemonstrations('MountainCar-v0', operator, 1);
  assert.ok(
    o.actions.some((a) => a === 1),
    'the operator sometimes presses a random button',
  );
  assert.deepEqual(recordDemonstrations('MountainCar-v0', expert, 1), e, 'recording is deterministic');
});

test('a behaviour-cloning warm start from good demonstrations pays off on MountainCar', async () => {
  const { brief, baseline } = getPublicTask('mountaincar-reach');
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-demo-'));
  const score = async (demo: string) => {
    // The behaviour cloning learns from normalised observations (the baseline's raw positions and
    // velocities differ in scale by 100×, and a cloned policy on them does not reach the flag).
    const spec = {
      ...baseline,
      environment: { ...baseline.environment, wrappers: ['normalize-observation'] },
      dataset: { demonstrations: demo },
      budget: { envSteps: 4096, targetReturn: null },
    };
    const dir = join(tmp, demo);
    await runJob(spec, brief, { outDir: dir, data: dataForJob(brief.id, spec) });
    return scoreArtifact(brief.id, dir).raw;
  };
  const fromExpert = await score('expert-few');
  const fromRandom = await score('logged-random');
  assert.ok(fromExpert > fromRandom + 20, `expert ${fromExpert} vs random ${fromRandom}`);
});

test('demonstrations are checked against the catalog and the algorithm', () => {
  const { brief, baseline } = getPublicTask('mountaincar-reach');
  const bad = validateSpec({ ...baseline, dataset: { demonstrations: 'nope' } }, brief);
  assert.ok(!bad.ok && /dataset\.demonstrations: got "nope": not in the task's catalog \(expert-few, operator-many, logged-random\)/.test(bad.error.message));
  const ars = validateSpec(
    { ...baseline, dataset: { demonstrations: 'expert-few' }, algorithm: { name: 'ars', stepSize: 0.02, directions: 8, topDirections: 4, noise: 0.03 } },
    brief,
  );
  assert.ok(!ars.ok && /implemented for ppo/.test(ars.error.message));
});

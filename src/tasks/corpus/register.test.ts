import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureDoc, fixtureRandom, writeCorpus } from '../../testing/corpus.js';
import { getPublicTask } from '../briefs.js';
import { clearExtraTasks } from '../extra.js';
import { taskFingerprintDetail } from '../fingerprint.js';
import { getSupervisedEvaluation } from '../hidden.js';
import { useEvalSecret } from '../secret.js';
import { registerCorpusDraws, registerCorpusTasks, registeredCorpusDraws } from './register.js';

const dir = mkdtempSync(join(tmpdir(), 'rrl-corpus-reg-'));
test.after(() => {
  clearExtraTasks();
  rmSync(dir, { recursive: true, force: true });
});

const r = fixtureRandom(5);
const n = 260;
const x = Array.from({ length: n }, () => r() * 4);
writeCorpus(dir, [
  {
    package: 'lme4',
    item: 'growth',
    doc: fixtureDoc('Growth', 'The response is `height`.', { height: 'plant height, cm', soil: 'soil type' }),
    columns: [
      { name: 'height', kind: 'numeric', data: x.map((v, i) => 10 + 3 * v + (i % 4) + r() * 4) },
      { name: 'water', kind: 'numeric', data: x.map((v, i) => (i % 9 === 0 ? null : v)) },
      { name: 'soil', kind: 'categorical', data: x.map((_, i) => ['clay', 'sand', 'loam', null][i % 4]) },
      { name: 'light', kind: 'numeric', data: x.map(() => r()) },
    ],
  },
]);

test('registered corpus tasks are scored like any: the split drawn from the secret, the coded columns sent with the rows', async () => {
  useEvalSecret('corpus-test-secret');
  const tasks = await registerCorpusTasks({ dir, splits: ['held-out'] });
  assert.deepEqual(
    tasks.map((t) => t.id),
    ['corpus-lme4-growth-height', 'corpus-lme4-growth-soil'],
  );
  const id = tasks[0].id;
  assert.equal(getPublicTask(id).brief.evaluation?.rows, Math.round(n * 0.3));
  const e = getSupervisedEvaluation(id);
  assert.equal(e.heldOut().test.y.length, Math.round(n * 0.3));
  const data = e.jobData(['clean-small']);
  assert.deepEqual(data.columns?.[1], { kind: 'categorical', levels: ['clay', 'loam', 'sand'] });
  assert.ok(data.sources['clean-small'].x.length > 0);
  const fp = taskFingerprintDetail(id);
  assert.ok(fp.parts.some((p) => p.what === 'corpus table' && p.value === 'lme4::growth'));
  // What a scorer thread is sent, and registers again from the table alone.
  const draws = registeredCorpusDraws();
  assert.deepEqual(draws, [{ dir, tasks: tasks.map((t) => ({ id: t.id, package: t.package, item: t.item, target: t.target })) }]);
  assert.equal(await registerCorpusDraws(draws, id), true);
  assert.equal(await registerCorpusDraws(draws, 'corpus-other'), false);
  assert.equal(taskFingerprintDetail(id).fingerprint, fp.fingerprint);
  // Another split's tasks are not registered.
  assert.deepEqual(await registerCorpusTasks({ dir, splits: ['train'] }), []);
  // The same corpus in another directory (another clone, RRL_CORPUS) makes the same tasks: a run or cache made with one resumes with the other.
  const moved = mkdtempSync(join(tmpdir(), 'rrl-corpus-moved-'));
  try {
    cpSync(dir, moved, { recursive: true });
    clearExtraTasks();
    await registerCorpusTasks({ dir: moved, splits: ['held-out'] });
    assert.equal(taskFingerprintDetail(id).fingerprint, fp.fingerprint);
  } finally {
    rmSync(moved, { recursive: true, force: true });
  }
});

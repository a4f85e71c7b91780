import test from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runJob } from '../inner/train.js';
import type { Executor } from '../run/executor.js';
import { RewardService } from '../serve/service.js';
import { Store } from '../store/store.js';
import { getPublicTask } from '../tasks/briefs.js';
import { forgetTaskDirs, registerTaskDir } from '../tasks/file/register.js';
import { taskFingerprint } from '../tasks/fingerprint.js';
import { ScriptedAgent } from '../testing/scripted-agent.js';
import { classificationTask, syntheticRows, taskDir, toCsv, writeTask } from '../testing/task-files.js';
import { TaskChangedError, pinTaskFingerprints } from './fingerprints.js';
import { trainAgent } from './loop.js';
import { dataForJob } from './scoring/hidden-score.js';
import { Scorer } from './scoring/scorer-pool.js';

const dir = taskDir('rrl-fp-run-');
const original = toCsv(syntheticRows(200));
const changed = toCsv(syntheticRows(200, 3000));
writeTask(dir, 'pin.json', classificationTask('pin-own'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** Loads the task directory again, as a new process would. */
async function reload(): Promise<void> {
  forgetTaskDirs();
  await registerTaskDir(dir);
}

/** An executor that fails every job at once, as a NaN loss (never retried; these tests are about opening runs, not training). */
const failing: Executor = {
  name: 'failing',
  slots: 1,
  execute: async () => ({ status: 'failed', kind: 'nan', error: 'not trained here', cost: {} }),
  cancelAll: () => {},
  close: async () => {},
};

test('a scorer thread scores the task as the harness loaded it: a data file rewritten mid-run is a one-line score-error, never another split', async () => {
  writeFileSync(join(dir, 'data.csv'), original);
  await reload();
  const spec = getPublicTask('pin-own').baseline;
  const artifact = join(dir, 'artifact');
  await runJob(spec, getPublicTask('pin-own').brief, { outDir: artifact, data: dataForJob('pin-own', spec) });
  const live = new Scorer({ workers: 1 });
  try {
    const before = await live.score('pin-own', artifact);
    assert.ok(before.ok, JSON.stringify(before));
    writeFileSync(join(dir, 'data.csv'), changed); // the run goes on; the harness keeps what it loaded
    const again = await live.score('pin-own', artifact);
    assert.deepEqual(again, { ...before, wallSeconds: again.wallSeconds }, 'a thread that loaded before the edit scores its snapshot');
    const fresh = new Scorer({ workers: 1 }); // a new scorer thread loads the files itself
    try {
      const r = await fresh.score('pin-own', artifact);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.equal(r.kind, 'score-error');
      assert.match(
        r.error,
        /^scoring: task pin-own: data file \S*data\.csv changed since the harness loaded it \(sha256 [0-9a-f]{12} → [0-9a-f]{12}(, \d+ → \d+ bytes)?; fingerprint [0-9a-f]{12} → [0-9a-f]{12}\); the scorer refuses to score it against another split; restore the file, or start a new run$/,
      );
      // A task file that no longer loads names the change too, not only the load error.
      writeTask(dir, 'pin.json', '{ "id": "pin-own", ');
      const another = new Scorer({ workers: 1 });
      const broken = await another.score('pin-own', artifact).finally(() => another.close());
      assert.ok(!broken.ok);
      if (!broken.ok) assert.match(broken.error, /^scoring: task pin-own: task file \S*pin\.json changed since the harness loaded it \(sha256 [^\n]+$/);
    } finally {
      writeTask(dir, 'pin.json', classificationTask('pin-own'));
      await fresh.close();
    }
  } finally {
    await live.close();
    writeFileSync(join(dir, 'data.csv'), original);
  }
});

test("a run records its tasks' fingerprints; resuming after a used task file changed is refused in one line naming the file", async () => {
  writeFileSync(join(dir, 'data.csv'), original);
  await reload();
  const run = join(dir, 'run-train');
  const config = { tasks: ['pin-own', 'cartpole-short'], agent: 'random' as const, iterations: 1, group: 1, seed: 2, taskDir: dir };
  const summary = await trainAgent(run, config, failing, { cache: null, agent: new ScriptedAgent([() => getPublicTask('pin-own').baseline]) });
  const store = new Store(run);
  const recorded = store.taskFingerprints(summary.run);
  store.close();
  assert.deepEqual([...recorded.keys()].sort(), ['cartpole-short', 'pin-own']);
  assert.equal(recorded.get('pin-own')?.fingerprint, taskFingerprint('pin-own'));
  await trainAgent(run, null, failing, { cache: null }); // unchanged: resumes
  writeFileSync(join(dir, 'data.csv'), changed);
  await reload();
  await assert.rejects(
    trainAgent(run, null, failing, { cache: null }),
    (err: Error) =>
      err instanceof TaskChangedError &&
      /^task pin-own: data file \S*data\.csv changed since the run started \(sha256 [0-9a-f]{12} → [0-9a-f]{12}[^)]*\); restore it to resume this run, or start a new run in another directory$/.test(
        err.message,
      ),
  );
  writeFileSync(join(dir, 'data.csv'), original);
  await reload();
  await trainAgent(run, null, failing, { cache: null }); // restored: resumes again
});

test('a task the run has no job on takes its new fingerprint; a serve run refuses a used task that changed', async () => {
  writeFileSync(join(dir, 'data.csv'), original);
  await reload();
  const run = join(dir, 'run-serve');
  const service = RewardService.open(run, { mode: 'serve', seed: 1, reward: { rule: 'improvement', lambda: 0.5 } }, failing);
  await service.close();
  const store = new Store(run);
  const runId = store.getRun()!.id;
  assert.equal(store.taskFingerprints(runId).get('pin-own')?.fingerprint, taskFingerprint('pin-own'), 'every task is recorded when the run opens');
  writeFileSync(join(dir, 'data.csv'), changed);
  await reload();
  pinTaskFingerprints(store, runId, ['pin-own']); // no job on it yet: nothing was scored on the old data
  assert.equal(store.taskFingerprints(runId).get('pin-own')?.fingerprint, taskFingerprint('pin-own'));
  store.addJobs(runId, [{ round: 0, slot: 0, task: 'pin-own', kind: 'baseline', agent: 'baseline', spec: getPublicTask('pin-own').baseline, trace: null }]);
  store.close();
  writeFileSync(join(dir, 'data.csv'), original);
  await reload();
  assert.throws(
    () => RewardService.open(run, null, failing),
    (err: Error) =>
      err instanceof TaskChangedError &&
      /^task pin-own: data file \S*data\.csv changed since the run started \([^\n]+\); restore it to resume this run/.test(err.message),
  );
});

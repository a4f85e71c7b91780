/**
 * The task fingerprints a run started with (tasks/fingerprint.ts). When a run opens — created or
 * resumed — each of its tasks' fingerprints is recorded in its store the first time, and compared
 * with the record afterwards: a task whose definition or data changed after the run trained or
 * scored a job on it is refused, in one line naming the task and the file, so that a resumed run
 * never mixes scores on two splits. A task the run has no job on yet takes its current
 * fingerprint (nothing was scored against the old one).
 */
import type { Store } from '../store/store.js';
import { type TaskFingerprint, describeFingerprintChange, taskFingerprintDetail } from '../tasks/fingerprint.js';

/** A task of a run whose files changed after the run used them (the message is one line). */
export class TaskChangedError extends Error {}

/**
 * Records the fingerprints of `tasks` in the run (those not recorded yet, or recorded and unused)
 * and throws `TaskChangedError` for the first task whose fingerprint differs from the one the run
 * recorded while the run has jobs on it.
 */
export function pinTaskFingerprints(store: Store, runId: string, tasks: string[]): void {
  const recorded = store.taskFingerprints(runId);
  const used = store.jobTasks(runId);
  for (const task of new Set(tasks)) {
    const now = taskFingerprintDetail(task);
    const then = recorded.get(task);
    if (then?.fingerprint === now.fingerprint) continue;
    if (then && used.has(task)) {
      const line = describeFingerprintChange(then.detail as TaskFingerprint, now, 'the run started') ?? `task ${task} changed since the run started`;
      throw new TaskChangedError(`${line}; restore it to resume this run, or start a new run in another directory`);
    }
    store.setTaskFingerprint(runId, task, now.fingerprint, now);
  }
}

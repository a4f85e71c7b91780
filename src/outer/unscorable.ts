/**
 * Failures of the harness, not of the job: a job that ended in one of them says nothing about the
 * spec, so it is neither paid nor charged. `rrl serve` tries such a job again (`JOB_ATTEMPTS` in
 * all); when every attempt failed the harness's way, its reward is `null` ("unscorable", zero
 * advantage in the trainer, as the Open Reward Standard reads `None`), never −1.
 *
 * The kinds are those a spec cannot cause within its bounds: a lost worker thread, a cancelled job
 * (the server stopping), a Slurm node that failed, was preempted or did not boot, and the scorer's
 * own failures (its time limit, its heap, an error in it: the model it scores is capped by the
 * spec's bounds and trained by the engine, whose time and memory are the job's own limits). A
 * job's own failures stay −1: an invalid spec, an error, the job's time or memory limit, a NaN.
 */
import type { JobRow } from '../store/store.js';

/** Failure kinds that are the harness's, not the job's. */
export const HARNESS_FAILURES: ReadonlySet<string> = new Set([
  'worker-exit',
  'cancelled',
  'node-fail',
  'preempted',
  'boot-fail',
  'score-timeout',
  'score-out-of-memory',
  'score-error',
]);

/** Attempts of a job whose earlier attempts failed the harness's way (the first included). */
export const JOB_ATTEMPTS = 2;

/** True when the job failed for a reason of the harness (see HARNESS_FAILURES). */
export function harnessFailure(row: Pick<JobRow, 'status' | 'failureKind'>): boolean {
  return row.status === 'failed' && HARNESS_FAILURES.has(row.failureKind ?? '');
}

/**
 * Why a settled job has no reward, or null when it has one: a harness failure of its own, or no
 * reference for its task (`missing`: every baseline seed failed the harness's way or the machine's).
 */
export function unscorableReason(row: Pick<JobRow, 'status' | 'failureKind' | 'error'>, missing: string | null): string | null {
  if (harnessFailure(row)) return `unscorable: ${row.failureKind}: ${row.error ?? 'no message'} (the harness's failure, on every attempt)`;
  if (missing !== null && row.status === 'succeeded') return `unscorable: ${missing}`;
  return null;
}

/**
 * Slurm job states and what they mean for a training job: still live, finished (and how),
 * or lost to the cluster and worth submitting again. Shared by the CLI and REST executors.
 */

/** States in which a job is queued or running (it may still finish). */
export const LIVE_STATES = [
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'REQUEUED',
  'REQUEUE_HOLD',
  'REQUEUE_FED',
  'RESIZING',
  'SIGNALING',
  'STAGE_OUT',
  'STOPPED',
  'RESV_DEL_HOLD',
] as const;

/** What a final state means for the job. */
export interface StateOutcome {
  /** COMPLETED: the job's own status file says whether training succeeded. */
  completed: boolean;
  /** The node or the scheduler took the job away: submit it again (within the limit). */
  resubmit: boolean;
  /** The failure kind recorded in the store (for states other than COMPLETED). */
  kind: string;
  /** Why, in words. */
  reason: string;
}

const FINAL: Record<string, StateOutcome> = {
  COMPLETED: { completed: true, resubmit: false, kind: 'succeeded', reason: 'the batch job completed' },
  FAILED: { completed: false, resubmit: false, kind: 'error', reason: 'the batch job exited with a non-zero code' },
  TIMEOUT: { completed: false, resubmit: false, kind: 'timeout', reason: 'the batch job reached its Slurm time limit' },
  OUT_OF_MEMORY: { completed: false, resubmit: false, kind: 'out-of-memory', reason: 'the batch job ran out of memory (Slurm OUT_OF_MEMORY)' },
  CANCELLED: { completed: false, resubmit: false, kind: 'cancelled', reason: 'the batch job was cancelled (scancel)' },
  NODE_FAIL: { completed: false, resubmit: true, kind: 'node-fail', reason: 'the node running the batch job failed (Slurm NODE_FAIL)' },
  PREEMPTED: { completed: false, resubmit: true, kind: 'preempted', reason: 'the batch job was preempted by the scheduler' },
  BOOT_FAIL: { completed: false, resubmit: true, kind: 'boot-fail', reason: 'the node failed to boot for the batch job (Slurm BOOT_FAIL)' },
  DEADLINE: { completed: false, resubmit: false, kind: 'timeout', reason: 'the batch job missed its Slurm deadline' },
  SPECIAL_EXIT: { completed: false, resubmit: false, kind: 'error', reason: 'the batch job ended in SPECIAL_EXIT' },
  REVOKED: { completed: false, resubmit: false, kind: 'cancelled', reason: 'the batch job was revoked (federation)' },
};

/**
 * The bare state name from what squeue, sacct, scontrol, the job-completion log or
 * slurmrestd print: "CANCELLED by 0" → CANCELLED, "out_of_memory" → OUT_OF_MEMORY,
 * REST arrays (["FAILED", "..."]) → their first entry.
 */
export function normalizeState(raw: unknown): string {
  const s = Array.isArray(raw) ? String(raw[0] ?? '') : String(raw ?? '');
  return s.trim().split(/\s+/)[0].replace(/\+$/, '').toUpperCase();
}

/** True while the job may still run (queued, running, held, requeued). */
export function isLive(state: string): boolean {
  return (LIVE_STATES as readonly string[]).includes(normalizeState(state));
}

/** The outcome of a final state; unknown states are failures that name the state. */
export function finalOutcome(state: string): StateOutcome {
  const s = normalizeState(state);
  return FINAL[s] ?? { completed: false, resubmit: false, kind: 'error', reason: `the batch job ended in the unexpected Slurm state "${state}"` };
}

/** The states the executors map, for documentation and tests. */
export const MAPPED_STATES = Object.keys(FINAL);

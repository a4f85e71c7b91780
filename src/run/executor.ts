import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskBrief } from '../spec/brief.js';
import { ARTIFACT_FILES, type Artifact, type JobCost } from '../spec/artifact.js';
import { writeFailureStatus } from '../inner/train.js';
import type { CurvePoint } from '../spec/artifact.js';
import type { SupervisedData } from '../spec/data.js';

/** What an executor needs to run one job: the spec, the public brief, where to write. */
export interface JobRequest {
  spec: unknown;
  brief: TaskBrief;
  outDir: string;
  /** Supervised tasks: the rows of the sources the spec names (built by the harness). */
  data?: SupervisedData;
}

/** A job's result as the outer loop sees it; failures carry a reason, never throw. */
export type JobResult =
  | { status: 'succeeded'; artifact: Artifact; curve: CurvePoint[] }
  | { status: 'failed'; kind: string; error: string; cost: Partial<JobCost> };

/** Runs jobs somewhere (worker threads here, a cluster later), enforcing limits. */
export interface Executor {
  readonly name: string;
  /** How many jobs it runs at once. */
  readonly slots: number;
  /**
   * True when a job left in its directory by an earlier harness (a batch job still queued or
   * running) is picked up again: the loop then leaves the directory for the executor to judge.
   */
  readonly reattaches?: boolean;
  /** Runs one job; resolves with its result, whatever happens. */
  execute(req: JobRequest, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<JobResult>;
  /** Cancels every job in flight. */
  cancelAll(reason?: string): void;
  close(): Promise<void>;
}

/**
 * The executor's own time limit for a job whose task caps it at `maxWallSeconds`: the cap plus
 * a grace (10 % and 10 s, for starting a worker and loading the engine). The engine enforces
 * the cap itself and ends the job cleanly as a `timeout`; the executor's limit is the backstop
 * for a job that cannot reach the engine's checks (a single huge operation, a stuck program).
 */
export function executorTimeoutMs(maxWallSeconds: number): number {
  return Math.round((maxWallSeconds * 1.1 + 10) * 1000);
}

/** Reads an artifact's curve file (JSON lines). */
export function readCurve(dir: string): CurvePoint[] {
  const p = join(dir, ARTIFACT_FILES.curve);
  if (!existsSync(p)) return [];
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as CurvePoint);
}

/** Records a failure in the artifact directory when the job could not do it itself. */
export function recordFailure(dir: string, kind: string, error: string): void {
  const p = join(dir, ARTIFACT_FILES.status);
  let written = false;
  if (existsSync(p)) {
    try {
      written = (JSON.parse(readFileSync(p, 'utf8')) as { status?: string }).status === 'failed';
    } catch {
      written = false;
    }
  }
  if (!written) writeFailureStatus(dir, error, kind);
}

/**
 * One proposal through the middle of the flow: validate, cache, execute, score (the reward is
 * settled per group afterwards, outer/settle.ts). Two callers share it: `rrl train` (the agent
 * lives in the harness, outer/loop.ts) and `rrl serve` (the agent lives in an RL framework
 * outside, serve/). A job row goes in pending and comes out finished in the store, or stays
 * pending when the run was interrupted (resume runs it again). Opening the run is
 * outer/open-run.ts; parsing a completion into a proposal is outer/answer.ts.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type { TaskBrief } from '../spec/brief.js';
import { validateSpec } from '../inner/spec-check.js';
import { type Executor, executorTimeoutMs } from '../run/executor.js';
import type { Store, JobOutcome, JobRow } from '../store/store.js';
import { type ResultCache, originOf, specKey } from '../store/cache.js';
import { dataForJob } from './scoring/hidden-score.js';
import type { Scorer } from './scoring/scorer-pool.js';
import { taskFingerprint } from '../tasks/fingerprint.js';
import { JOB_ATTEMPTS, harnessFailure } from './unscorable.js';

/** Tracks wall time during which at least one job trains or is scored. */
export class BusyClock {
  private active = 0;
  private since = 0;
  busy = 0;
  /** A job starts. */
  enter(): void {
    if (this.active++ === 0) this.since = performance.now();
  }
  /** A job ends. */
  leave(): void {
    if (--this.active === 0) this.busy += (performance.now() - this.since) / 1000;
  }
}

/** The spec with `budget.stopWhenFlat` set (the harness's pruning of hopeless jobs). */
function withFlatStop(spec: unknown): unknown {
  if (!spec || typeof spec !== 'object') return spec;
  const s = spec as { budget?: unknown };
  return { ...s, budget: { ...(s.budget && typeof s.budget === 'object' ? s.budget : {}), stopWhenFlat: true } };
}

/** What a job pipeline needs: where the run lives and what trains and scores its jobs. */
export interface JobPipelineOptions {
  dir: string;
  runId: string;
  store: Store;
  executor: Executor;
  scorer: Scorer;
  /** The result cache (null: off). */
  cache: ResultCache | null;
  secret: string;
  evalId: string;
  signal?: AbortSignal;
  /** Per-job time limit (default: from the task's wall-clock cap). */
  timeoutMs?: number;
  /** Lines for the operator (a job tried again). */
  log?: (message: string) => void;
  /** Stop proposals' control jobs whose curve stays flat past half their budget. */
  pruneFlat?: boolean;
  clock?: BusyClock;
}

/**
 * Runs pending job rows: validate, reuse a cached result or train in the executor and score on
 * the hidden evaluation, record the outcome. Identical specs in flight at once train once.
 */
export class JobPipeline {
  private readonly inFlight = new Map<string, Promise<void>>();
  constructor(private readonly o: JobPipelineOptions) {}

  /** The artifact directory of a job. */
  outDir(jobId: number): string {
    return join(this.o.dir, 'jobs', `j${String(jobId).padStart(5, '0')}`);
  }

  /** Trains one valid job in the executor and scores it here; null when the run was interrupted. */
  private async trainAndScore(row: JobRow, spec: unknown, brief: TaskBrief, outDir: string): Promise<JobOutcome | null> {
    const { executor, signal, scorer, secret, clock } = this.o;
    if (!executor.reattaches) rmSync(outDir, { recursive: true, force: true });
    clock?.enter();
    try {
      const result = await executor.execute(
        { spec, brief, outDir, data: dataForJob(row.task, spec) },
        { signal, timeoutMs: this.o.timeoutMs ?? executorTimeoutMs(brief.budget.maxWallSeconds) },
      );
      if (signal?.aborted) return null;
      if (result.status !== 'succeeded') {
        return { status: 'failed', failureKind: result.kind, error: result.error, wallSeconds: result.cost.wallSeconds ?? null, artifactDir: outDir };
      }
      const { cost } = result.artifact;
      const work = {
        envSteps: cost.envSteps,
        examples: cost.examples,
        wallSeconds: cost.wallSeconds,
        cpuSeconds: cost.cpuSeconds,
        artifactDir: outDir,
        curve: result.curve,
      };
      // Scored in the scorer's own thread: the harness's event loop stays free meanwhile.
      const scored = await scorer.score(row.task, outDir, { signal, secret });
      if (signal?.aborted) return null;
      if (!scored.ok) return { status: 'failed', failureKind: scored.kind, error: scored.error, ...work };
      return { status: 'succeeded', ...work, score: scored.score };
    } finally {
      clock?.leave();
    }
  }

  /**
   * Runs one pending job row to its recorded outcome. Returns false when the run was interrupted
   * (the row stays pending for resume), true otherwise (including invalid specs and failures).
   */
  async run(row: JobRow, brief: TaskBrief): Promise<boolean> {
    const { store, cache, evalId } = this.o;
    const outDir = this.outDir(row.id);
    const prune = this.o.pruneFlat && (row.kind === 'proposal' || row.kind === 'confirm') && brief.kind === 'control';
    const checked = validateSpec(prune ? withFlatStop(row.spec) : row.spec, brief);
    if (!checked.ok) {
      store.finishJob(row.id, { status: 'invalid', failureKind: 'invalid', error: checked.error.message });
      return true;
    }
    const key = specKey(checked.spec, evalId, taskFingerprint(row.task));
    // Identical specs in flight at once train only once; the others wait and reuse.
    while (this.inFlight.has(key)) await this.inFlight.get(key);
    const hit = cache?.get(key);
    if (hit) {
      // Shown as cached only when an agent's job had this result before (never a harness seed's alone).
      if (originOf(row.kind) === 'proposal' && hit.origin !== 'proposal') cache?.markProposed(key);
      store.finishJob(row.id, {
        status: hit.status,
        failureKind: hit.failureKind,
        error: hit.error,
        envSteps: hit.envSteps,
        examples: hit.examples,
        wallSeconds: hit.wallSeconds,
        cpuSeconds: hit.cpuSeconds,
        artifactDir: hit.artifactDir,
        cacheHit: key,
        cacheOrigin: hit.origin,
        score: hit.raw !== null && hit.normalized !== null ? { raw: hit.raw, normalized: hit.normalized, stderr: hit.stderr ?? null } : null,
      });
      return true;
    }
    let release = (): void => {};
    this.inFlight.set(key, new Promise<void>((r) => (release = r)));
    try {
      let outcome = await this.trainAndScore(row, checked.spec, brief, outDir);
      // A failure of the harness's own says nothing about the spec: such a job is tried again
      // (JOB_ATTEMPTS in all) before it is recorded; baselines have their own retries (outer/settle.ts).
      for (
        let attempt = 1;
        outcome !== null &&
        row.kind !== 'baseline' &&
        attempt < JOB_ATTEMPTS &&
        harnessFailure({ status: outcome.status, failureKind: outcome.failureKind ?? null });
        attempt++
      ) {
        this.o.log?.(`job ${row.id}: ${outcome.failureKind} (the harness's failure); trying it again`);
        outcome = await this.trainAndScore(row, checked.spec, brief, outDir);
      }
      if (outcome === null) return false;
      store.finishJob(row.id, outcome);
      cache?.put({
        key,
        task: row.task,
        status: outcome.status === 'succeeded' ? 'succeeded' : 'failed',
        failureKind: outcome.failureKind ?? null,
        error: outcome.error ?? null,
        envSteps: outcome.envSteps ?? null,
        examples: outcome.examples ?? null,
        wallSeconds: outcome.wallSeconds ?? null,
        cpuSeconds: outcome.cpuSeconds ?? null,
        raw: outcome.score?.raw ?? null,
        normalized: outcome.score?.normalized ?? null,
        stderr: outcome.score?.stderr ?? null,
        artifactDir: outDir,
        origin: originOf(row.kind),
      });
      return true;
    } finally {
      this.inFlight.delete(key);
      release();
    }
  }
}

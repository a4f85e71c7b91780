import { availableParallelism } from 'node:os';
import { engineFailureKind } from '../inner/errors.js';
import { type Artifact, writeFailureStatus } from '../inner/train.js';
import { type Executor, type JobRequest, type JobResult, readCurve, recordFailure } from './executor.js';
import { WorkerPool } from './pool.js';

/** Options of the local executor. */
export interface LocalExecutorOptions {
  /** Worker threads (default: one per core). */
  workers?: number;
  /** Per-job JS heap limit in MB (default 2048). */
  memoryMb?: number;
  /** Default per-job wall-clock limit in ms (the brief's cap is passed per job). */
  timeoutMs?: number;
}

/** Runs jobs in a pool of worker threads on this machine. */
export class LocalExecutor implements Executor {
  readonly name = 'local';
  readonly slots: number;
  private readonly pool: WorkerPool<JobRequest, Artifact>;
  private readonly timeoutMs?: number;
  private readonly memoryMb: number;

  /** Starts the pool (workers load lazily on first use). */
  constructor(options: LocalExecutorOptions = {}) {
    this.slots = options.workers ?? availableParallelism();
    this.memoryMb = options.memoryMb ?? 2048;
    this.timeoutMs = options.timeoutMs;
    this.pool = new WorkerPool<JobRequest, Artifact>({
      workerFile: new URL('./job-worker.js', import.meta.url),
      workers: this.slots,
      maxOldGenerationSizeMb: this.memoryMb,
    });
  }

  /** Runs one job in a worker; every failure becomes a result with its reason. */
  async execute(req: JobRequest, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<JobResult> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const out = await this.pool.run(req, { timeoutMs, signal: options.signal });
    if (out.ok) return { status: 'succeeded', artifact: out.value, curve: readCurve(req.outDir) };
    // The engine's own failures (NaN, its wall-clock and memory caps) keep their kinds across the
    // worker boundary; they and the job's other failures are in its status.json already. The pool's
    // (timeout, out-of-memory, worker-exit, cancelled) replace whatever the job wrote: a job whose
    // WebAssembly heap ran out records a plain error before its worker is ended.
    const kind = out.kind === 'error' ? engineFailureKind(out.message) : out.kind;
    if (out.kind === 'error') recordFailure(req.outDir, kind, out.message);
    else writeFailureStatus(req.outDir, out.message, kind);
    return { status: 'failed', kind, error: out.message, cost: { wallSeconds: out.wallSeconds } };
  }

  /** Cancels queued and running jobs. */
  cancelAll(reason?: string): void {
    this.pool.cancelAll(reason);
  }

  /** Stops the workers. */
  close(): Promise<void> {
    return this.pool.close();
  }
}

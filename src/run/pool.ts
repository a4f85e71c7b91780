/**
 * A generic worker-thread pool for running training jobs, built on piscina.
 *
 * Boundary 4 of the design ("bad input is a result, not a crash") is this module's whole point:
 * `run` never rejects. A task that throws, runs past its wall-clock limit, exhausts its heap,
 * kills its worker or is cancelled resolves with `{ ok: false, kind, message }`, the broken
 * worker is replaced, and the next task runs normally.
 *
 * A task that fails inside WebAssembly (tfjs's wasm heap ran out: `RuntimeError: Aborted()`, "memory
 * access out of bounds") leaves its worker broken for every later task. Every worker runs the task
 * module through `pool-entry.ts`, which ends such a worker after writing the reason into a shared
 * buffer; the task resolves as `out-of-memory` (never `error`, which caches treat as deterministic)
 * and piscina replaces the worker, so it is never reused.
 *
 * Workers get a copy of the environment without secrets (see `jobEnvironment`).
 *
 * The pool keeps its own FIFO queue and hands piscina at most `size` tasks at a time, so a task's
 * wall-clock limit (and its `wallSeconds`) counts from the moment it is handed to a worker, not
 * from the moment it was queued behind other jobs.
 */
import { getMaxListeners, setMaxListeners } from 'node:events';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { jobEnvironment } from '../inner/job-env.js';
import { type Envelope, POISONED_EXIT_CODE, REPORT_BYTES, readReport } from './pool-entry.js';

/** Why a task did not produce a value. */
export type TaskFailureKind = 'error' | 'timeout' | 'out-of-memory' | 'cancelled' | 'worker-exit';

/** The result of one task: its value, or the kind of failure and a readable message. */
export type TaskOutcome<R> = { ok: true; value: R; wallSeconds: number } | { ok: false; kind: TaskFailureKind; message: string; wallSeconds: number };

/** How to build a pool. */
export interface PoolOptions {
  /** Compiled ESM worker module whose default export is `async (payload) => result`. */
  workerFile: URL;
  /** Number of worker threads (default: `os.availableParallelism()`). */
  workers?: number;
  /** Per-worker V8 old-generation heap limit in MB (default 1024). */
  maxOldGenerationSizeMb?: number;
}

/** Per-task options. */
export interface RunOptions {
  /** Wall-clock limit for this task in milliseconds, counted from when a worker takes it. */
  timeoutMs?: number;
  /** Cancellation from the caller. */
  signal?: AbortSignal;
}

/** The module piscina runs in every worker; it loads the task module itself. */
const ENTRY_FILE = fileURLToPath(new URL('./pool-entry.js', import.meta.url));

/** Default per-worker heap limit in MB. */
const DEFAULT_HEAP_MB = 1024;
/** The longest delay setTimeout honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One task as the pool tracks it, from `run` until it settles. */
interface Job<P, R> {
  payload: P;
  /** Where a worker that ends itself after a WebAssembly failure writes why. */
  report: SharedArrayBuffer;
  timeoutMs: number | undefined;
  /** Aborts the piscina task (which terminates its worker when it is running). */
  controller: AbortController;
  /** Set just before `controller.abort()`: what the outcome will say. */
  abortedAs: { kind: 'timeout' | 'cancelled'; message: string } | null;
  /** `performance.now()` when a worker took the task; null while queued. */
  startedAt: number | null;
  timer: NodeJS.Timeout | null;
  detachCaller: (() => void) | null;
  settled: boolean;
  resolve: (outcome: TaskOutcome<R>) => void;
}

/**
 * A fixed-size pool of worker threads running one module's default export.
 * Payloads and results are structured-cloned (plain JSON-like values).
 */
export class WorkerPool<P, R> {
  /** Number of worker threads. */
  readonly size: number;
  readonly #filename: string;
  readonly #heapMb: number;
  readonly #piscina: Piscina<Envelope<P>, R>;
  readonly #queue: Job<P, R>[] = [];
  readonly #running = new Set<Job<P, R>>();
  #closed = false;

  /** Starts `workers` threads (they load the worker module on their first task). */
  constructor(options: PoolOptions) {
    const size = options.workers ?? os.availableParallelism();
    if (!Number.isInteger(size) || size < 1) {
      throw new RangeError(`workers must be a positive integer, got ${String(options.workers)}`);
    }
    const heapMb = options.maxOldGenerationSizeMb ?? DEFAULT_HEAP_MB;
    if (!Number.isFinite(heapMb) || heapMb <= 0) {
      throw new RangeError(`maxOldGenerationSizeMb must be a positive number, got ${String(heapMb)}`);
    }
    this.size = size;
    this.#heapMb = heapMb;
    this.#filename = fileURLToPath(options.workerFile);
    this.#piscina = new Piscina<Envelope<P>, R>({
      // No pool-level filename: piscina would then pre-load the module while starting a worker,
      // and a module that fails to load there is an 'error' event with no task to blame (the task
      // would wait forever). The entry is passed per task and loads the task module itself, so a
      // load failure is that task's error.
      filename: null,
      // Job code never sees the evaluation secret or credentials of the harness.
      env: jobEnvironment(),
      minThreads: size,
      maxThreads: size,
      concurrentTasksPerWorker: 1,
      resourceLimits: { maxOldGenerationSizeMb: heapMb },
      // Piscina loads the task module with require() first; on Node ≥ 20.19 that loads ES modules
      // synchronously, and terminating a worker inside that load (a cancel or a time limit in the
      // first second) aborts the whole process (V8: "IsGraphAsync must be used on an instantiated
      // module"). Without require(esm) it falls back to import(), which a terminate interrupts safely.
      execArgv: process.features.require_module === undefined ? [] : ['--no-experimental-require-module'],
      recordTiming: false,
    });
    // Piscina emits 'error' for a worker that dies while it has no task (e.g. a timer left behind by
    // a finished task throws). Without a listener that event would crash the whole process; the
    // worker is replaced either way, and no task is affected, so there is nothing to report.
    this.#piscina.on('error', () => {});
  }

  /** Runs one task; never rejects: every failure becomes { ok: false, kind, message }. */
  run(payload: P, options: RunOptions = {}): Promise<TaskOutcome<R>> {
    return new Promise<TaskOutcome<R>>((resolve) => {
      if (this.#closed) {
        resolve({ ok: false, kind: 'cancelled', message: 'the pool is closed', wallSeconds: 0 });
        return;
      }
      const { timeoutMs, signal } = options;
      if (timeoutMs !== undefined && !(timeoutMs >= 0)) {
        resolve({
          ok: false,
          kind: 'error',
          message: `timeoutMs must be a non-negative number of milliseconds, got ${String(timeoutMs)}`,
          wallSeconds: 0,
        });
        return;
      }
      if (signal?.aborted) {
        resolve({ ok: false, kind: 'cancelled', message: callerMessage(signal), wallSeconds: 0 });
        return;
      }
      const job: Job<P, R> = {
        payload,
        report: new SharedArrayBuffer(REPORT_BYTES),
        timeoutMs,
        controller: new AbortController(),
        abortedAs: null,
        startedAt: null,
        timer: null,
        detachCaller: null,
        settled: false,
        resolve,
      };
      if (signal) {
        const onAbort = (): void => this.#cancel(job, callerMessage(signal));
        // One listener per queued or running task on the caller's signal is expected, not a leak.
        const listeners = this.#queue.length + this.#running.size + 1;
        if (getMaxListeners(signal) < listeners) setMaxListeners(listeners, signal);
        signal.addEventListener('abort', onAbort, { once: true });
        job.detachCaller = () => signal.removeEventListener('abort', onAbort);
      }
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** Cancels every queued and running task (they resolve with kind 'cancelled'). */
  cancelAll(reason?: string): void {
    const message = reason ?? 'cancelled: the pool cancelled all its tasks';
    // Empty the queue first so that tasks freed by the aborts below do not start queued ones.
    for (const job of this.#queue.splice(0)) this.#cancel(job, message);
    for (const job of [...this.#running]) this.#cancel(job, message);
  }

  /** Stops the workers; tasks still queued or running resolve with kind 'cancelled'. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.cancelAll('cancelled: the pool was closed');
    await this.#piscina.destroy();
  }

  /** Hands queued tasks to piscina while fewer than `size` are running. */
  #pump(): void {
    while (!this.#closed && this.#running.size < this.size && this.#queue.length > 0) {
      const job = this.#queue.shift()!;
      this.#start(job);
    }
  }

  #start(job: Job<P, R>): void {
    this.#running.add(job);
    job.startedAt = performance.now();
    // setTimeout fires at once for delays past 2^31 - 1 ms (about 24.8 days): treat those as no limit.
    if (job.timeoutMs !== undefined && job.timeoutMs <= MAX_TIMER_MS) {
      const limitMs = job.timeoutMs;
      job.timer = setTimeout(() => {
        this.#abort(job, 'timeout', `exceeded the wall-clock limit of ${formatSeconds(limitMs)}`);
      }, limitMs);
    }
    let pending: Promise<R>;
    try {
      const envelope: Envelope<P> = { file: this.#filename, payload: job.payload, report: job.report };
      pending = this.#piscina.run(envelope, { filename: ENTRY_FILE, signal: job.controller.signal });
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => this.#settle(job, { ok: true, value, wallSeconds: this.#wall(job) }),
      (error: unknown) => {
        const failure = job.abortedAs ?? this.#classify(error, job.report);
        this.#settle(job, { ok: false, ...failure, wallSeconds: this.#wall(job) });
      },
    );
  }

  /** Cancels a queued task at once, or aborts a running one (its worker is terminated). */
  #cancel(job: Job<P, R>, message: string): void {
    if (job.settled) return;
    const queuedAt = this.#queue.indexOf(job);
    if (queuedAt !== -1) {
      this.#queue.splice(queuedAt, 1);
      this.#settle(job, { ok: false, kind: 'cancelled', message, wallSeconds: 0 });
      return;
    }
    if (job.startedAt !== null) {
      this.#abort(job, 'cancelled', message);
    } else {
      // Already taken out of the queue by cancelAll but never started.
      this.#settle(job, { ok: false, kind: 'cancelled', message, wallSeconds: 0 });
    }
  }

  /** Aborts a running task; piscina rejects it and terminates (then replaces) its worker. */
  #abort(job: Job<P, R>, kind: 'timeout' | 'cancelled', message: string): void {
    if (job.settled || job.abortedAs !== null) return;
    job.abortedAs = { kind, message };
    job.controller.abort(message);
  }

  #settle(job: Job<P, R>, outcome: TaskOutcome<R>): void {
    if (job.settled) return;
    job.settled = true;
    if (job.timer !== null) clearTimeout(job.timer);
    job.detachCaller?.();
    const wasRunning = this.#running.delete(job);
    job.resolve(outcome);
    if (wasRunning) this.#pump();
  }

  #wall(job: Job<P, R>): number {
    return job.startedAt === null ? 0 : (performance.now() - job.startedAt) / 1000;
  }

  /** Turns a piscina rejection that the pool did not cause itself into a failure kind and message. */
  #classify(error: unknown, report: SharedArrayBuffer): { kind: TaskFailureKind; message: string } {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return {
        kind: 'out-of-memory',
        message: `ran out of memory: the worker's heap limit of ${this.#heapMb} MB was reached`,
      };
    }
    const text = error instanceof Error ? error.message : '';
    // Piscina's wording when a worker's thread exits while it runs a task (process.exit, …).
    const exited = /^worker exited with code: (-?\d+)/.exec(text);
    if (exited && Number(exited[1]) === POISONED_EXIT_CODE) {
      // The entry ended a worker whose WebAssembly failed; its report says why.
      const poisoned = readReport(report);
      if (poisoned) return poisoned;
    }
    if (exited) {
      return { kind: 'worker-exit', message: `the worker exited with code ${exited[1]} before finishing the task` };
    }
    // Piscina's wording when the pool is destroyed under a task.
    if (text === 'Terminating worker thread') {
      return { kind: 'cancelled', message: 'cancelled: the worker was terminated' };
    }
    return { kind: 'error', message: describeError(error) };
  }
}

/** The message for a task cancelled by the caller's signal, with its reason when it is readable. */
function callerMessage(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (typeof reason === 'string' && reason !== '') return `cancelled by the caller: ${reason}`;
  if (reason instanceof Error && reason.name !== 'AbortError' && reason.message !== '') {
    return `cancelled by the caller: ${reason.message}`;
  }
  return 'cancelled by the caller';
}

/**
 * "Name: message" for an error thrown in a worker, or just the message when the name is "Error".
 * Structured cloning turns every custom error class into a plain Error (the name is lost, the
 * stack is kept), so the name is recovered from the stack's first line, "NaNError: loss…".
 */
function describeError(error: unknown): string {
  if (error instanceof Error) {
    const message = error.message;
    let name = error.name;
    const stack = typeof error.stack === 'string' ? error.stack : '';
    const header = /^([A-Za-z_$][\w$.]*)(?::|\n|$)/.exec(stack);
    if (name === 'Error' && header && header[1] !== 'Error' && stack.startsWith(`${header[1]}: ${message}`)) {
      name = header[1];
    }
    if (message === '') return name;
    return name === 'Error' ? message : `${name}: ${message}`;
  }
  if (typeof error === 'string' && error !== '') return error;
  if (error !== null && typeof error === 'object') {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string' && message !== '') return message;
    let json: string | undefined;
    try {
      json = JSON.stringify(error);
    } catch {
      // not serialisable: fall through
    }
    // Node passes some worker errors back as an empty object, notably the DataCloneError raised
    // when the task's result cannot be structured-cloned.
    if (json !== undefined && json !== '{}') return json;
    return UNREADABLE_ERROR;
  }
  if (error === undefined || error === null || error === '') return UNREADABLE_ERROR;
  return String(error);
}

/** The message when a worker failed but its error carries nothing readable. */
const UNREADABLE_ERROR =
  'the worker failed with an error that could not be read back ' +
  '(a result that cannot be structured-cloned, such as one holding a function or a symbol, fails this way)';

/** 2000 → "2.0 s", 250 → "0.25 s". */
function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${seconds >= 1 || seconds === 0 ? seconds.toFixed(1) : String(Number(seconds.toPrecision(2)))} s`;
}

/**
 * The engine's own wall-clock and memory caps on one job (DESIGN boundaries 3 and 4).
 * The engine builds one `JobLimits` per job from the task's brief; the step-counting
 * environment wrapper calls `check()` on every vector step and the algorithms call it
 * (through `TrainContext.checkLimits`) inside their gradient loops. Algorithms never see
 * the caps' numbers. Passing a cap throws an error whose name says the failure kind.
 */
import { getHeapStatistics } from 'node:v8';
import { performance } from 'node:perf_hooks';
import { type TaskBrief, jobMemoryCapMb } from '../spec/brief.js';
import { fusedMemoryBytes } from './nn/mlp.js';
import { MemoryLimitError, TimeLimitError } from './errors.js';

/** What a job uses of its memory cap, in bytes, counted from the job's start. */
export interface MemoryUse {
  /** Tensor memory: the WebAssembly memory the fused engine's networks allocated. */
  tensors: number;
  /** JS heap and array buffers (typed arrays) allocated since the start. */
  heap: number;
}

/** JS heap used plus the array buffers of this thread (the WebAssembly memory is not among them). */
function heapBytes(): number {
  return getHeapStatistics().used_heap_size + process.memoryUsage().arrayBuffers;
}

/** Milliseconds between two memory readings (reading the heap costs ~10 µs; the clock ~50 ns). */
const MEMORY_EVERY_MS = 25;

const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/**
 * The wall-clock and memory caps of one job, counted from its start. Memory is what the job
 * added since it started (so a worker's earlier jobs and the harness are not charged to it):
 * tensor memory (the WebAssembly memory of the fused engine's networks) plus the JS heap and
 * array buffers.
 */
export class JobLimits {
  private readonly deadline: number;
  private readonly base: { fused: number; heap: number };
  private lastMemoryCheck = -Infinity;

  /** Starts the clock at `startedAt` (a `performance.now()` reading; default now). */
  constructor(
    private readonly caps: { wallSeconds: number; memoryMb: number },
    private readonly startedAt = performance.now(),
  ) {
    this.deadline = startedAt + caps.wallSeconds * 1000;
    this.base = { fused: fusedMemoryBytes(), heap: heapBytes() };
  }

  /** Memory used by the job so far (see the class comment). */
  memoryUse(): MemoryUse {
    return {
      tensors: fusedMemoryBytes() - this.base.fused,
      heap: Math.max(0, heapBytes() - this.base.heap),
    };
  }

  /** Throws `TimeLimitError` past the deadline and `MemoryLimitError` past the memory cap. */
  check(): void {
    const now = performance.now();
    if (now > this.deadline) {
      throw new TimeLimitError(
        `budget.maxWallSeconds: the job ran ${((now - this.startedAt) / 1000).toFixed(1)} s, past the task's wall-clock cap of ${this.caps.wallSeconds} s`,
      );
    }
    if (now - this.lastMemoryCheck < MEMORY_EVERY_MS) return;
    this.lastMemoryCheck = now;
    this.checkMemory();
  }

  /** Throws `MemoryLimitError` past the memory cap (`check` calls it at most every 25 ms). */
  checkMemory(): void {
    const use = this.memoryUse();
    const total = use.tensors + use.heap;
    if (total > this.caps.memoryMb * 2 ** 20) {
      throw new MemoryLimitError(
        `budget.maxMemoryMb: the job's memory reached ${mb(total)} (tensors ${mb(use.tensors)}, JS heap ${mb(use.heap)}), past the task's cap of ` +
          `${this.caps.memoryMb} MB`,
      );
    }
  }
}

/** The limits of a job of this brief, with the clock started at `startedAt`. */
export function jobLimits(brief: Pick<TaskBrief, 'budget'>, startedAt?: number): JobLimits {
  return new JobLimits({ wallSeconds: brief.budget.maxWallSeconds, memoryMb: jobMemoryCapMb(brief) }, startedAt);
}

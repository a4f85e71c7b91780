/**
 * The errors the engine throws on purpose, and the failure kind of any error a job throws. Its
 * own module so that every part of the engine (the algorithms, the environment wrappers, the
 * job limits) can import them without importing one another.
 */
import { wasmFailure } from './wasm-failure.js';

/** Thrown when training produces a non-finite number (loss, reward, weights); its failure kind is `nan`. */
export class NaNError extends Error {
  /** Builds the error; `message` says where the NaN appeared. */
  constructor(message: string) {
    super(message);
    this.name = 'NaNError';
  }
}

/** Thrown when a job runs past its task's wall-clock cap; its failure kind is `timeout`. */
export class TimeLimitError extends Error {
  readonly kind = 'timeout';
  /** Builds the error; `message` is one line with the cap and the time used. */
  constructor(message: string) {
    super(message);
    this.name = 'TimeLimitError';
  }
}

/** Thrown when a job's memory passes its task's cap; its failure kind is `out-of-memory`. */
export class MemoryLimitError extends Error {
  readonly kind = 'out-of-memory';
  /** Builds the error; `message` is one line with the cap and the numbers measured. */
  constructor(message: string) {
    super(message);
    this.name = 'MemoryLimitError';
  }
}

/** Failure kinds of the errors the engine throws on purpose, by error name. */
const KIND_BY_NAME: Record<string, 'nan' | 'timeout' | 'out-of-memory'> = {
  NaNError: 'nan',
  TimeLimitError: 'timeout',
  MemoryLimitError: 'out-of-memory',
};

/**
 * The failure kind of an engine error as a worker reports it ("Name: message", see
 * run/pool.ts): `nan`, `timeout` or `out-of-memory` for the engine's own errors, else `error`.
 */
export function engineFailureKind(message: string): 'nan' | 'timeout' | 'out-of-memory' | 'error' {
  const name = /^([A-Za-z]+Error): /.exec(message)?.[1];
  return name !== undefined && Object.hasOwn(KIND_BY_NAME, name) ? KIND_BY_NAME[name] : 'error';
}

/**
 * The failure kind of an error a job threw: the engine's own by class name, a WebAssembly
 * failure (memory that could not be allocated or grown, a trap) as `out-of-memory` (or
 * `worker-exit`), `error` for any other.
 */
export function errorKind(err: unknown): 'nan' | 'timeout' | 'out-of-memory' | 'worker-exit' | 'error' {
  const name = err instanceof Error ? err.name : '';
  if (Object.hasOwn(KIND_BY_NAME, name)) return KIND_BY_NAME[name];
  return wasmFailure(err)?.kind ?? 'error';
}

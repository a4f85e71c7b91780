/**
 * The module every pool worker runs. It loads the task module named in the envelope, runs its
 * default export on the payload, and passes the result or the error back, except in one case:
 * when the task failed inside a WebAssembly module (tfjs's wasm backend ran out of memory,
 * aborted or trapped). Such a worker is broken for every later task (its wasm heap is exhausted
 * or corrupt; attack 1 of issue 10), so instead of returning the error it writes the reason into
 * the envelope's shared report and ends its own thread: the pool reads the reason, and piscina
 * replaces the worker before it can take another task.
 */
import { pathToFileURL } from 'node:url';
import { type WasmFailure, wasmFailure } from '../inner/wasm-failure.js';

/** What the pool hands a worker: the task module, its payload, and a shared buffer for a poisoned worker's reason. */
export interface Envelope<P> {
  file: string;
  payload: P;
  report: SharedArrayBuffer;
}

/** Why a worker ended itself after a WebAssembly failure: the failure kind and a one-line reason. */
export type PoisonReport = WasmFailure;

/** Exit code of a worker that ended itself after a WebAssembly failure (with a report written). */
export const POISONED_EXIT_CODE = 86;
/** Bytes of the shared report buffer (a length prefix, then UTF-8 JSON). */
export const REPORT_BYTES = 1024;

/** Writes a report into the shared buffer (length-prefixed UTF-8 JSON, cut to fit). */
export function writeReport(report: SharedArrayBuffer, value: PoisonReport): void {
  let bytes = new TextEncoder().encode(JSON.stringify(value));
  if (bytes.length > REPORT_BYTES - 4) {
    const short = { ...value, message: value.message.slice(0, 200) };
    bytes = new TextEncoder().encode(JSON.stringify(short));
  }
  new Uint8Array(report, 4).set(bytes.subarray(0, Math.min(bytes.length, report.byteLength - 4)));
  Atomics.store(new Int32Array(report, 0, 1), 0, bytes.length);
}

/** Reads a report back; null when none was written or it cannot be read. */
export function readReport(report: SharedArrayBuffer): PoisonReport | null {
  const length = Atomics.load(new Int32Array(report, 0, 1), 0);
  if (length <= 0 || length > report.byteLength - 4) return null;
  try {
    const value = JSON.parse(new TextDecoder().decode(new Uint8Array(report, 4, length).slice())) as PoisonReport;
    return typeof value.message === 'string' && (value.kind === 'out-of-memory' || value.kind === 'worker-exit') ? value : null;
  } catch {
    return null;
  }
}

/** Runs the task module's default export on the payload; ends this worker after a WebAssembly failure. */
export default async function runInWorker<P>(envelope: Envelope<P>): Promise<unknown> {
  const mod = (await import(pathToFileURL(envelope.file).href)) as { default?: unknown };
  if (typeof mod.default !== 'function') throw new TypeError(`the worker module ${envelope.file} has no default export function`);
  try {
    return await (mod.default as (payload: P) => unknown)(envelope.payload);
  } catch (error) {
    const poisoned = wasmFailure(error);
    if (!poisoned) throw error;
    writeReport(envelope.report, { kind: poisoned.kind, message: `${poisoned.message}; the worker was replaced` });
    process.exit(POISONED_EXIT_CODE);
  }
}

/**
 * Telling a WebAssembly failure from an ordinary error. The fused engine allocates one
 * WebAssembly memory per network: one that cannot be allocated throws a RangeError naming
 * `WebAssembly.Memory` (V8 caps each memory at 4 GiB, or lower under --wasm-max-mem-pages).
 * TensorFlow.js's wasm backend (still used by the outer loop's controller) aborts
 * (`RuntimeError: Aborted()`), fails to grow ("Cannot enlarge memory") or writes through a null
 * allocation ("memory access out of bounds"), after which its module is broken for every later
 * computation in that thread. Such a failure is `out-of-memory`, never a plain `error` (which
 * caches treat as deterministic), and the thread that met it must not run another job (see
 * src/run/pool-entry.ts).
 */

/** A WebAssembly failure: its kind and a one-line reason. */
export interface WasmFailure {
  kind: 'out-of-memory' | 'worker-exit';
  message: string;
}

/** Messages of a WebAssembly heap that ran out (emscripten's abort, a failed grow, a null allocation written to). */
const WASM_MEMORY = /Aborted\(|\babort\(|memory access out of bounds|Cannot enlarge memory|Maximum memory size exceeded|WebAssembly\.Memory/i;

/** WebAssembly.RuntimeError (the global's types are not in this project's lib). */
const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: new () => Error } }).WebAssembly.RuntimeError;

/**
 * Classifies an error thrown by a task: a WebAssembly memory failure (out-of-memory), another
 * WebAssembly trap (the worker is as broken; worker-exit), or null for an ordinary error.
 * Looks at the error and its `cause` chain.
 */
export function wasmFailure(error: unknown): WasmFailure | null {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e !== null && e !== undefined; depth++) {
    const text = e instanceof Error ? `${e.name}: ${e.message}` : typeof e === 'string' ? e : '';
    const oneLine = text.replace(/\s+/g, ' ').trim().slice(0, 300);
    if (WASM_MEMORY.test(text)) {
      return { kind: 'out-of-memory', message: `ran out of WebAssembly (tensor) memory: ${oneLine}` };
    }
    if (e instanceof WasmRuntimeError) {
      return { kind: 'worker-exit', message: `the tensor backend's WebAssembly trapped: ${oneLine}` };
    }
    e = e instanceof Error ? e.cause : undefined;
  }
  return null;
}

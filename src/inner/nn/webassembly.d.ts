/**
 * The few WebAssembly globals the engine uses (Node has them; the project's `lib` has no DOM
 * types, where TypeScript declares them).
 */
declare namespace WebAssembly {
  /** A compiled module. */
  class Module {
    constructor(bytes: Uint8Array);
  }
  /** A linear memory of 64 KiB pages. */
  class Memory {
    constructor(descriptor: { initial: number; maximum?: number });
    readonly buffer: ArrayBuffer;
    grow(pages: number): number;
  }
  /** A module instantiated with its imports. */
  class Instance {
    constructor(module: Module, imports: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  /** Whether `bytes` is a valid module. */
  function validate(bytes: Uint8Array): boolean;
}

/**
 * Size and nesting limits on untrusted values (an LLM's raw reply, a parsed spec, an agent's
 * trace), checked before anything formats, stringifies, validates or stores them.
 *
 * The walk is iterative (an explicit stack, never recursion) and stops at the first limit it
 * meets, so its own cost is bounded by the limits whatever the value: a 6,000-deep object,
 * a million keys or a cyclic object cost at most `maxNodes` steps, and the answer is one
 * short line that names where the limit was met.
 */

/** Limits on one value. */
export interface Bounds {
  /** Deepest nesting of objects and arrays (the root object is depth 1). */
  readonly maxDepth: number;
  /** Objects, arrays and leaf values counted together. */
  readonly maxNodes: number;
  /** Longest string value. */
  readonly maxStringLength: number;
  /** Longest object key. */
  readonly maxKeyLength: number;
  /** Characters of every string and key together. */
  readonly maxTotalChars: number;
  /** Refuse the keys `__proto__`, `constructor` and `prototype` anywhere. */
  readonly refusePrototypeKeys: boolean;
}

/** Longest raw reply of an LLM the harness parses (characters). */
export const MAX_REPLY_CHARS = 65_536;

/**
 * Limits on a job spec (as parsed from a reply or a file). A valid spec is 4 levels deep and
 * about 60 nodes; strings may reach the reply's size so that the schema, not this check,
 * names an over-long field.
 */
export const SPEC_BOUNDS: Bounds = Object.freeze({
  maxDepth: 16,
  maxNodes: 4096,
  maxStringLength: MAX_REPLY_CHARS,
  maxKeyLength: 256,
  maxTotalChars: 2 * MAX_REPLY_CHARS,
  refusePrototypeKeys: true,
});

/**
 * Limits on an agent's trace as stored (an LLM trace holds the prompt, the completions and
 * their token log-probabilities: tens of thousands of nodes at most).
 */
export const TRACE_BOUNDS: Bounds = Object.freeze({
  maxDepth: 32,
  maxNodes: 1_000_000,
  maxStringLength: 1 << 20,
  maxKeyLength: 1024,
  maxTotalChars: 16 << 20,
  refusePrototypeKeys: false,
});

/** Keys that would reach an object's prototype when assigned. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Longest error message of one issue (characters). */
export const MAX_ISSUE_CHARS = 300;
/** Longest error message of a whole rejection (characters). */
export const MAX_ERROR_CHARS = 2000;

/** Why a value broke a limit: where (a short path) and which limit, as one line. */
export interface BoundsViolation {
  path: string;
  /** What was found there, in a few words ("a value over the size limits", "a reserved key"). */
  shown: string;
  message: string;
}

/**
 * One line of at most `max` characters: line breaks and other control characters become
 * spaces, and a longer text ends in `…`.
 */
export function oneLine(text: unknown, max = MAX_ERROR_CHARS): string {
  let s = typeof text === 'string' ? text : safeString(text);
  const cut = s.length > max * 4;
  if (cut) s = s.slice(0, max * 4); // keep the replace below cheap
  s = s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
  return s.length > max || cut ? `${s.slice(0, Math.max(0, max - 1))}…` : s;
}

function safeString(v: unknown): string {
  try {
    return String(v);
  } catch {
    return typeof v;
  }
}

/** A path for messages: `a.b[0].c`, shortened in the middle when long. */
function showPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else {
      const key = k.length > 40 ? `${k.slice(0, 37)}...` : k;
      out += /^[A-Za-z_$][\w$]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out.length > 120 ? `${out.slice(0, 58)}...${out.slice(-58)}` : out;
}

interface Frame {
  value: unknown;
  depth: number;
  path: readonly (string | number)[];
  /** Set on the marker that closes an object: it leaves the chain of open ancestors. */
  leave?: object;
}

/**
 * Checks `value` against `bounds` without recursion; null when it fits, else the first limit
 * it breaks. Only plain JSON data fits: null, booleans, numbers, strings, arrays and plain
 * objects without getters (and `undefined`, which JSON leaves out); anything else (functions,
 * symbols, bigints, class instances, cycles) is refused by name. A part shared by two parents
 * counts twice, as JSON writes it twice. Never throws.
 */
export function checkBounds(value: unknown, bounds: Bounds): BoundsViolation | null {
  try {
    return walk(value, bounds);
  } catch (err) {
    return {
      path: '',
      shown: 'a value that is not JSON data',
      message: oneLine(`the value cannot be read as JSON data (${(err as Error)?.message ?? 'error'})`, MAX_ISSUE_CHARS),
    };
  }
}

function walk(root: unknown, b: Bounds): BoundsViolation | null {
  const stack: Frame[] = [{ value: root, depth: 0, path: [] }];
  const open = new Set<object>(); // the objects on the path from the root: a cycle returns to one
  let nodes = 0;
  let chars = 0;
  const fail = (path: readonly (string | number)[], message: string, shown = 'a value over the size limits'): BoundsViolation => ({
    path: showPath(path),
    shown,
    message,
  });
  const notJson = 'a value that is not JSON data';
  while (stack.length) {
    const { value, depth, path, leave } = stack.pop()!;
    if (leave) {
      open.delete(leave);
      continue;
    }
    if (++nodes > b.maxNodes) return fail(path, `more than ${b.maxNodes} values in all`);
    if (value === null || value === undefined || typeof value === 'boolean' || typeof value === 'number') continue;
    if (typeof value === 'string') {
      if (value.length > b.maxStringLength) return fail(path, `a string of ${value.length} characters; the limit is ${b.maxStringLength}`);
      chars += value.length;
      if (chars > b.maxTotalChars) return fail(path, `more than ${b.maxTotalChars} characters of text in all`);
      continue;
    }
    if (typeof value !== 'object') return fail(path, `a ${typeof value} is not JSON data`, notJson);
    if (depth + 1 > b.maxDepth) return fail(path, `nested more than ${b.maxDepth} levels deep`);
    if (open.has(value)) return fail(path, 'the value contains itself (a cycle); JSON data has no references', notJson);
    open.add(value);
    stack.push({ value: null, depth, path, leave: value });
    if (Array.isArray(value)) {
      if (value.length > b.maxNodes) return fail(path, `an array of ${value.length} items; at most ${b.maxNodes} values in all`);
      for (let i = value.length - 1; i >= 0; i--) {
        if (!Object.hasOwn(value, i)) return fail([...path, i], 'a hole in an array is not JSON data', notJson);
        stack.push({ value: value[i], depth: depth + 1, path: [...path, i] });
      }
      continue;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return fail(path, 'only plain objects are JSON data (got an instance of a class)', notJson);
    const keys = Object.keys(value);
    if (keys.length > b.maxNodes) return fail(path, `an object of ${keys.length} keys; at most ${b.maxNodes} values in all`);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i];
      if (k.length > b.maxKeyLength) return fail(path, `a key of ${k.length} characters; the limit is ${b.maxKeyLength}`);
      if (b.refusePrototypeKeys && PROTOTYPE_KEYS.has(k))
        return fail([...path, k], `the key "${k}" is refused (it names an object's prototype)`, 'a reserved key');
      chars += k.length;
      if (chars > b.maxTotalChars) return fail(path, `more than ${b.maxTotalChars} characters of text in all`);
      const d = Object.getOwnPropertyDescriptor(value, k);
      if (d && !('value' in d)) return fail([...path, k], 'a property with a getter is not JSON data', notJson);
      stack.push({ value: d?.value, depth: depth + 1, path: [...path, k] });
    }
  }
  return null;
}

/** The violation as one line: `what: at PATH: LIMIT`. */
export function describeViolation(what: string, v: BoundsViolation): string {
  return oneLine(`${what} ${v.path ? `at ${v.path}` : ''}: ${v.message}`.replace(/ {2,}/g, ' ').replace(' :', ':'), MAX_ISSUE_CHARS);
}

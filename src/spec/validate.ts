import type { z } from 'zod';
import { JobSpecSchema, type JobSpec } from './schema.js';
import { MAX_ERROR_CHARS, MAX_ISSUE_CHARS, SPEC_BOUNDS, checkBounds, oneLine } from './bounds.js';

/** One reason a spec is invalid: where, what value, which rule. */
export interface SpecIssue {
  path: string;
  value: unknown;
  message: string;
  /** How to show the value when it is not to be printed (e.g. a value over the size limits). */
  shown?: string;
}

/** Issues listed in one error message; the rest are counted. */
export const MAX_LISTED_ISSUES = 12;

/** Thrown (or returned) when a spec breaks the schema or the task's brief. */
export class SpecError extends Error {
  readonly issues: SpecIssue[];
  /** Builds the error from its issues; the message lists every one. */
  constructor(issues: SpecIssue[]) {
    super(formatIssues(issues));
    this.name = 'SpecError';
    this.issues = issues;
  }
}

/** Values small enough to print (anything larger is shown by its kind only). */
const SHOW_BOUNDS = { ...SPEC_BOUNDS, maxDepth: 8, maxNodes: 256, maxTotalChars: 4096, refusePrototypeKeys: false };

/** Renders a value short enough for one line of an error message (never stringifies a large one). */
export function showValue(v: unknown): string {
  if (v === undefined) return 'missing';
  let s: string;
  if (typeof v === 'string') s = JSON.stringify(v.length > 200 ? v.slice(0, 200) : v);
  else if (v !== null && typeof v === 'object' && checkBounds(v, SHOW_BOUNDS) !== null)
    s = Array.isArray(v) ? `an array of ${v.length} items` : 'a large object';
  else {
    try {
      s = JSON.stringify(v) ?? String(v);
    } catch {
      s = typeof v;
    }
  }
  return oneLine(s.length > 80 ? `${s.slice(0, 77)}...` : s, 80);
}

/** One issue as `path: got value: rule`, at most `MAX_ISSUE_CHARS` characters on one line. */
function formatIssue(i: SpecIssue): string {
  const got = i.shown !== undefined ? `got ${i.shown}` : i.value === undefined ? 'missing' : `got ${showValue(i.value)}`;
  const path = i.path.length > 120 ? `${i.path.slice(0, 58)}...${i.path.slice(-58)}` : i.path;
  return oneLine(`${path || '(spec)'}: ${got}: ${i.message}`, MAX_ISSUE_CHARS);
}

/**
 * Formats issues as `path: got value: rule` joined by `; `: each at most `MAX_ISSUE_CHARS`
 * characters, at most `MAX_LISTED_ISSUES` of them listed (fewer when they are long) and the
 * rest counted, the whole at most `MAX_ERROR_CHARS` characters on one line.
 */
export function formatIssues(issues: SpecIssue[]): string {
  const listed: string[] = [];
  let length = 0;
  for (const issue of issues.slice(0, MAX_LISTED_ISSUES)) {
    const line = formatIssue(issue);
    if (listed.length && length + line.length + 2 > MAX_ERROR_CHARS - 40) break; // room for the count
    listed.push(line);
    length += line.length + 2;
  }
  const more = issues.length - listed.length;
  return oneLine(listed.join('; ') + (more > 0 ? `; and ${more} more issue${more === 1 ? '' : 's'}` : ''), MAX_ERROR_CHARS);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (!Object.hasOwn(cur as object, k as string)) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

/** Joins a zod path as `a.b[0].c`. */
export function joinPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const k of path) out += typeof k === 'number' ? `[${k}]` : out ? `.${String(k)}` : String(k);
  return out;
}

function issuesFromZod(error: z.ZodError, input: unknown): SpecIssue[] {
  const out: SpecIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        out.push({ path: joinPath(path), value: valueAt(input, path), message: 'unknown field (not part of the job spec)' });
      }
      continue;
    }
    if (issue.code === 'invalid_key') {
      const why = issue.issues.map((i) => i.message).join(', ') || issue.message;
      out.push({ path: joinPath(issue.path), value: undefined, shown: 'the name', message: `invalid parameter name (${why})` });
      continue;
    }
    if (issue.code === 'invalid_union' && 'errors' in issue && issue.path.length === 1 && issue.path[0] === 'algorithm') {
      out.push({ path: 'algorithm.name', value: valueAt(input, ['algorithm', 'name']), message: issue.message });
      continue;
    }
    out.push({ path: joinPath(issue.path), value: valueAt(input, issue.path), message: issue.message });
  }
  return out;
}

/**
 * Parses a spec against the schema; never throws. The size and nesting limits
 * (`SPEC_BOUNDS`) are checked first, before the schema or any error formatting reads it.
 */
export function parseSpec(input: unknown): { ok: true; spec: JobSpec } | { ok: false; error: SpecError } {
  const over = checkBounds(input, SPEC_BOUNDS);
  if (over) return { ok: false, error: new SpecError([{ path: over.path, value: undefined, shown: over.shown, message: over.message }]) };
  const r = JobSpecSchema.safeParse(input);
  if (r.success) return { ok: true, spec: r.data };
  return { ok: false, error: new SpecError(issuesFromZod(r.error, input)) };
}

/** Parses a spec against the schema; throws SpecError with every issue. */
export function assertSpec(input: unknown): JobSpec {
  const r = parseSpec(input);
  if (!r.ok) throw r.error;
  return r.spec;
}

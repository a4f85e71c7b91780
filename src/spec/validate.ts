import { z } from 'zod';
import { JobSpecSchema, type JobSpec } from './schema.js';

/** One reason a spec is invalid: where, what value, which rule. */
export interface SpecIssue {
  path: string;
  value: unknown;
  message: string;
}

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

/** Renders a value short enough for one line of an error message. */
export function showValue(v: unknown): string {
  if (v === undefined) return 'missing';
  let s: string;
  try {
    s = JSON.stringify(v);
  } catch {
    s = String(v);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Formats issues as `path: value — rule` lines. */
export function formatIssues(issues: SpecIssue[]): string {
  return issues
    .map((i) => `${i.path || '(spec)'}: ${i.value === undefined ? 'missing' : `got ${showValue(i.value)}`}: ${i.message}`)
    .join('; ');
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
    if (issue.code === 'invalid_union' && 'errors' in issue && issue.path.length === 1 && issue.path[0] === 'algorithm') {
      out.push({ path: 'algorithm.name', value: valueAt(input, ['algorithm', 'name']), message: issue.message });
      continue;
    }
    out.push({ path: joinPath(issue.path), value: valueAt(input, issue.path), message: issue.message });
  }
  return out;
}

/** Parses a spec against the schema; never throws. */
export function parseSpec(input: unknown): { ok: true; spec: JobSpec } | { ok: false; error: SpecError } {
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

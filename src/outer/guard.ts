/**
 * The outer loop's check on what an agent hands back, before anything stores it: whatever an
 * agent returns (or throws), the proposal that reaches the store is plain JSON within the
 * limits of `spec/bounds.ts`, and a proposal that is not becomes an `invalid` job with a
 * one-line reason instead of an exception that would stop the run (and stop it again on
 * every resume).
 */
import { type JsonObject, isJsonObject } from '../spec/patch.js';
import { MAX_ERROR_CHARS, SPEC_BOUNDS, TRACE_BOUNDS, checkBounds, describeViolation, oneLine } from '../spec/bounds.js';

/** A proposal as the loop stores it. */
export interface GuardedProposal {
  spec: unknown;
  trace: unknown;
  rejected?: { kind: string; error: string };
  /** The merge patch the answer was written as (outer/answer.ts); null or absent for a full spec. */
  patch?: JsonObject | null;
  /** A valid answer: whether it trains the same job as the task's baseline, seed aside. */
  unchanged?: boolean;
}

/**
 * Bounds an agent's proposal: a spec over `SPEC_BOUNDS` or a trace over `TRACE_BOUNDS` is
 * dropped (stored as null) and the job recorded invalid with the reason; the agent's own
 * rejection is kept, cut to one line. Never throws.
 */
export function guardProposal(p: { spec?: unknown; trace?: unknown; rejected?: { kind?: unknown; error?: unknown } | null; patch?: unknown }): GuardedProposal {
  const reasons: string[] = [];
  // A patch is kept only when it is a bounded object (it was bounded before it was applied).
  const patch = isJsonObject(p.patch) && !checkBounds(p.patch, SPEC_BOUNDS) ? { patch: p.patch } : {};
  let spec = p.spec ?? null;
  let trace = p.trace ?? null;
  const specOver = checkBounds(spec, SPEC_BOUNDS);
  if (specOver) {
    reasons.push(describeViolation('the proposed spec was not kept, it is over the limits of a job spec:', specOver));
    spec = null;
  }
  const traceOver = checkBounds(trace, TRACE_BOUNDS);
  if (traceOver) {
    reasons.push(describeViolation("the agent's trace was not kept, it is over the limits of a trace:", traceOver));
    trace = null;
  }
  const r = p.rejected;
  if (r !== undefined && r !== null) {
    const kind = typeof r.kind === 'string' && r.kind.trim() ? oneLine(r.kind, 64) : 'invalid';
    const own = (typeof r.error === 'string' ? oneLine(r.error, MAX_ERROR_CHARS) : '').trim() || 'the agent rejected its proposal without giving a reason';
    return { spec, trace, ...patch, rejected: { kind, error: oneLine([own, ...reasons].join('; '), MAX_ERROR_CHARS) } };
  }
  if (reasons.length) return { spec, trace, ...patch, rejected: { kind: 'invalid', error: oneLine(reasons.join('; '), MAX_ERROR_CHARS) } };
  return { spec, trace, ...patch };
}

/**
 * Worker-thread entry of `rrl serve`'s intake (serve/intake.ts): turns one request's completions
 * into proposals off the server's event loop. Each completion is parsed as `rrl train` parses a
 * reply (outer/evaluate.ts) and its spec validated against the task's brief; a spec that fails is
 * rejected here, with the reason the evaluator would record.
 */
import type { TaskBrief } from '../spec/brief.js';
import { MAX_ERROR_CHARS, oneLine } from '../spec/bounds.js';
import { validateSpec } from '../inner/validate.js';
import type { GuardedProposal } from '../outer/guard.js';
import { proposalFromCompletion } from '../outer/evaluate.js';

/** One request's completions and the brief of its task. */
export interface IntakeRequest {
  completions: string[];
  /** Null only for the empty request that loads the worker's modules. */
  brief: TaskBrief | null;
}

/** The proposals of `req.completions`, in order; a spec that fails validation comes back rejected. */
export default function parseCompletions(req: IntakeRequest): GuardedProposal[] {
  const brief = req.brief;
  if (!brief) return [];
  return req.completions.map((text) => {
    const p = proposalFromCompletion(text);
    if (p.rejected) return p;
    const checked = validateSpec(p.spec, brief);
    return checked.ok ? p : { ...p, rejected: { kind: 'invalid', error: oneLine(checked.error.message, MAX_ERROR_CHARS) } };
  });
}

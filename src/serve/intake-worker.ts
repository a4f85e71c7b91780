/**
 * Worker-thread entry of `rrl serve`'s intake (serve/intake.ts): turns one request's completions
 * into proposals off the server's event loop. Each completion is parsed as `rrl train` parses a
 * reply (outer/answer.ts): a full spec, or a merge patch over the task's baseline spec; its spec
 * is validated against the task's brief, and one that fails is rejected here, with the reason
 * the evaluator would record.
 */
import type { TaskBrief } from '../spec/brief.js';
import { MAX_ERROR_CHARS, oneLine } from '../spec/bounds.js';
import { checkAnswer, proposalFromCompletion } from '../outer/answer.js';
import type { GuardedProposal } from '../outer/guard.js';

/** One request's completions, the brief of its task and its baseline spec (what a patch applies to, unless `base` is given). */
export interface IntakeRequest {
  completions: string[];
  /** Null only for the empty request that loads the worker's modules. */
  brief: TaskBrief | null;
  baseline?: unknown;
  /** The spec a patch applies to when it is not the baseline (an episode's last valid job); `unchanged` still compares with the baseline. */
  base?: unknown;
}

/** The proposals of `req.completions`, in order; a spec that fails validation comes back rejected, a valid one says whether it is unchanged. */
export default function parseCompletions(req: IntakeRequest): GuardedProposal[] {
  const brief = req.brief;
  if (!brief) return [];
  return req.completions.map((text) => {
    const p = proposalFromCompletion(text, req.base === undefined ? req.baseline : req.base);
    if (p.rejected) return p;
    const checked = checkAnswer(p, brief, req.baseline);
    return checked.ok ? { ...p, unchanged: checked.unchanged } : { ...p, rejected: { kind: 'invalid', error: oneLine(checked.error, MAX_ERROR_CHARS) } };
  });
}

/**
 * Reading a reply: the JSON object in it (without a `<think>` block or a code fence), checked as a
 * full job spec or a merge patch over the task's baseline; and the repair turn's message for a
 * reply that fails, with the exact error.
 */
import type { TaskBrief } from '../../../spec/brief.js';
import type { JsonObject } from '../../../spec/patch.js';
import { MAX_ISSUE_CHARS, MAX_REPLY_CHARS, SPEC_BOUNDS, checkBounds, describeViolation, oneLine } from '../../../spec/bounds.js';
import { getPublicTask } from '../../../tasks/briefs.js';
import { checkAnswer, readAnswer } from '../../answer.js';

/**
 * The JSON part of a reply: without a leading `<think>…</think>` block (reasoning models on a
 * server without a reasoning parser) and without one surrounding Markdown code fence.
 */
function unfence(text: string): string {
  const body = text.replace(/^\s*<think>[\s\S]*?<\/think>/, '').trim();
  const m = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(body);
  return m ? m[1] : body;
}

/** The public baseline spec of a task (what a patch reply applies to); null for a task without one. */
export function publicBaseline(task: string): unknown {
  try {
    return getPublicTask(task).baseline;
  } catch {
    return null;
  }
}

/**
 * Checks one reply: JSON, an object, and a spec that fits the schema and the brief (ranges,
 * catalog, budget cap, the reward-expression compiler). The reply may be a full spec or a JSON
 * merge patch over the task's baseline spec (outer/answer.ts); `patch` is the patch as written
 * (null for a full spec) and `spec` the spec it stands for, returned either way.
 */
export function checkReply(
  content: string | null,
  brief: TaskBrief,
  baseline: unknown = publicBaseline(brief.id),
): { ok: true; spec: unknown; patch: JsonObject | null } | { ok: false; spec: unknown; patch: JsonObject | null; error: string } {
  const refused = (error: string, spec: unknown = null): { ok: false; spec: unknown; patch: null; error: string } => ({ ok: false, spec, patch: null, error });
  if (typeof content !== 'string' || !content.trim()) return refused('the reply is empty; expected one JSON object, the job spec');
  // Limits first: nothing parses, formats or stores a reply over them.
  if (content.length > MAX_REPLY_CHARS) {
    return refused(`the reply is ${content.length} characters long; the limit is ${MAX_REPLY_CHARS} (one JSON object, the job spec)`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(unfence(content));
  } catch (err) {
    const error = oneLine(`the reply is not JSON (${(err as Error).message}); expected one JSON object, the job spec`, MAX_ISSUE_CHARS);
    return refused(error, oneLine(content, 200));
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return refused(`the reply is JSON but not an object (got ${Array.isArray(parsed) ? 'an array' : typeof parsed}); expected the job spec object`);
  }
  const read = readAnswer(parsed, baseline);
  if (!read.ok) return refused(read.error);
  const over = checkBounds(read.spec, SPEC_BOUNDS);
  if (over) return refused(describeViolation('the reply is over the size limits of a job spec:', over));
  const checked = checkAnswer(read, brief, baseline);
  return checked.ok ? { ok: true, spec: read.spec, patch: read.patch } : { ok: false, spec: read.spec, patch: read.patch, error: checked.error };
}

/** A completion as stored in the trace and sent back in the repair turn: clipped at the reply limit. */
export function clipCompletion(content: string | null): string | null {
  if (typeof content !== 'string' || content.length <= MAX_REPLY_CHARS) return content;
  return `${content.slice(0, MAX_REPLY_CHARS)}…[${content.length - MAX_REPLY_CHARS} more characters not kept]`;
}

/** The user message of the repair turn: the exact error and what to send instead. */
export function repairMessage(error: string, brief: TaskBrief): string {
  return `Your reply was rejected: ${error}\nReply with the corrected, complete job spec for task "${brief.id}" as one JSON object and nothing else.`;
}

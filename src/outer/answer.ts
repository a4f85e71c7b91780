/**
 * The two forms of an answer (a completion's JSON object), in one place:
 *
 * - an object with a `task` field is a full job spec, read as it is;
 * - any other object is a JSON Merge Patch (RFC 7396, spec/patch.ts) over the baseline spec of
 *   the task the request is for: `{"algorithm": {"learningRate": 0.003}}` names only what changes.
 *
 * One rule beyond RFC 7396: a patch that names another algorithm (`{"algorithm": {"name": "dqn"}}`)
 * replaces the algorithm section: the old algorithm's own fields are not carried over, and the
 * patch gives the new one's. The patch is bounded like a spec before it is applied; the merged spec is then guarded and
 * validated as a full one is. An answer is `unchanged` when it trains the same job as the
 * baseline, seed aside (the validated specs compared without their seeds).
 *
 * `proposalFromCompletion` reads a completion as a language model writes it (prose and fences
 * around the object) into a proposal: `rrl train` and `rrl serve` parse replies the same way.
 */
import type { TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import { MAX_REPLY_CHARS, SPEC_BOUNDS, checkBounds, describeViolation } from '../spec/bounds.js';
import { extractJsonObject } from '../spec/extract.js';
import { type JsonObject, applyMergePatch, isJsonObject, mergePatchBetween } from '../spec/patch.js';
import { validateSpec } from '../inner/spec-check.js';
import { seedlessKey } from './identity.js';
import { type GuardedProposal, guardProposal } from './guard.js';

/** What an answer stands for: the spec to validate and, for the patch form, the patch as written. */
export type ReadAnswer = { ok: true; spec: unknown; patch: JsonObject | null } | { ok: false; error: string };

/** Whether a parsed answer is a full spec (an object naming its task) rather than a patch. */
export function isFullSpec(value: unknown): boolean {
  return !isJsonObject(value) || Object.hasOwn(value, 'task');
}

/**
 * Reads a parsed answer: a full spec (or anything not an object) as it is, any other object as a
 * merge patch over `baseline`, bounded like a spec first. Never throws.
 */
export function readAnswer(value: unknown, baseline: unknown): ReadAnswer {
  if (isFullSpec(value)) return { ok: true, spec: value, patch: null };
  const patch = value as JsonObject;
  const over = checkBounds(patch, SPEC_BOUNDS);
  if (over) {
    return { ok: false, error: describeViolation('the patch (an answer without a "task" field) was not applied, it is over the limits of a job spec:', over) };
  }
  if (!isJsonObject(baseline)) {
    return { ok: false, error: 'the answer is a patch (it has no "task" field) but the task has no baseline spec to apply it to; send the full job spec' };
  }
  return { ok: true, spec: applyMergePatch(switchedAlgorithm(baseline, patch), patch), patch };
}

/**
 * The baseline a patch applies to: as it is, or without its algorithm section when the patch
 * names another algorithm. Each algorithm has fields of its own; a switch takes the new
 * algorithm's fields from the patch rather than carrying the old one's.
 */
function switchedAlgorithm(baseline: JsonObject, patch: JsonObject): JsonObject {
  const to = isJsonObject(patch.algorithm) ? patch.algorithm.name : undefined;
  const from = isJsonObject(baseline.algorithm) ? baseline.algorithm.name : undefined;
  if (typeof to !== 'string' || to === from) return baseline;
  const { algorithm: _, ...rest } = baseline;
  return rest;
}

/** Whether a valid `spec` trains the same job as the task's `baseline`, seed aside (false when either is invalid). */
export function isUnchanged(spec: unknown, brief: TaskBrief, baseline: unknown): boolean {
  const a = validateSpec(spec, brief);
  if (!a.ok) return false;
  const b = validateSpec(baseline, brief);
  return b.ok && seedlessKey(a.spec) === seedlessKey(b.spec);
}

/**
 * Validates the spec an answer stands for against the task's brief. A spec made by a patch that
 * fails says so, with validation's reason (which names the field); a valid one says whether it
 * is unchanged from the baseline.
 */
export function checkAnswer(
  answer: { spec: unknown; patch?: JsonObject | null },
  brief: TaskBrief,
  baseline: unknown,
): { ok: true; spec: JobSpec; unchanged: boolean } | { ok: false; error: string } {
  const checked = validateSpec(answer.spec, brief);
  if (!checked.ok) {
    return { ok: false, error: answer.patch ? `the patch over the baseline spec gives an invalid spec: ${checked.error.message}` : checked.error.message };
  }
  return { ok: true, spec: checked.spec, unchanged: isUnchanged(checked.spec, brief, baseline) };
}

/**
 * The patch an answer would write to turn `baseline` into `spec` under the rule above: the
 * smallest merge patch, with the whole algorithm section when the algorithm changes.
 * `readAnswer(answerPatch(b, s), b)` stands for `s` (its nulls read as defaults).
 */
export function answerPatch(baseline: unknown, spec: unknown): JsonObject {
  const patch = mergePatchBetween(baseline, spec);
  if (!isJsonObject(patch) || !isJsonObject(baseline) || !isJsonObject(spec)) return isJsonObject(patch) ? patch : {};
  const algorithm = spec.algorithm;
  if (isJsonObject(algorithm) && isJsonObject(baseline.algorithm) && algorithm.name !== baseline.algorithm.name) {
    patch.algorithm = Object.fromEntries(Object.entries(algorithm).filter(([, v]) => v !== null));
  }
  return patch;
}

/**
 * Parses a completion as a language model writes it (prose, a code fence, a `<think>` block
 * around one JSON object) into a proposal as the store keeps it: the first complete JSON object,
 * a full spec or a merge patch over `baseline` (the task's baseline spec, `readAnswer`),
 * within the limits of a job spec; no object, or one over the limits, is an invalid proposal
 * with a one-line reason. The proposal keeps the patch as written. Never throws.
 */
export function proposalFromCompletion(text: string, baseline: unknown): GuardedProposal {
  if (text.length > MAX_REPLY_CHARS) {
    const error = `the completion is ${text.length} characters long; the limit is ${MAX_REPLY_CHARS}`;
    return { spec: null, trace: null, rejected: { kind: 'invalid', error } };
  }
  const found = extractJsonObject(text);
  if (!found.ok) return { spec: null, trace: null, rejected: { kind: 'invalid', error: found.error } };
  const read = readAnswer(found.value, baseline);
  if (!read.ok) return { spec: null, trace: null, rejected: { kind: 'invalid', error: read.error } };
  return guardProposal({ spec: read.spec, trace: null, patch: read.patch });
}

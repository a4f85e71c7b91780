/**
 * JSON Merge Patch (RFC 7396) over job specs: the patch form of an answer. A patch names only
 * what changes from the task's baseline spec — `{"algorithm": {"learningRate": 0.003}}` — and
 * `null` removes a field (the schema's default then applies). Arrays are replaced whole, as the
 * RFC says. Both functions are pure: they never change their arguments.
 */
import { isDeepStrictEqual } from 'node:util';

/** A JSON object (not an array, not null). */
export type JsonObject = Record<string, unknown>;

/** Whether `v` is a JSON object: not an array, not null. */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `target` with `patch` applied as RFC 7396 says (section 2, MergePatch). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return structuredClone(patch);
  const out: JsonObject = isJsonObject(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/**
 * The smallest merge patch that turns `from` into `to`: changed fields by value, objects by
 * their changed fields, arrays whole, fields `to` lacks as `null`. A field `to` sets to `null`
 * cannot be written as a merge patch (null removes); it becomes a removal, which specs read as
 * their default. `applyMergePatch(from, mergePatchBetween(from, to))` equals `to` without its nulls.
 */
export function mergePatchBetween(from: unknown, to: unknown): unknown {
  if (!isJsonObject(from) || !isJsonObject(to)) return structuredClone(to);
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(to)) {
    if (v === null) {
      if (k in from && from[k] !== null) out[k] = null;
      continue;
    }
    if (isDeepStrictEqual(from[k], v)) continue;
    if (isJsonObject(v) && isJsonObject(from[k])) {
      const inner = mergePatchBetween(from[k], v) as JsonObject;
      if (Object.keys(inner).length) out[k] = inner;
    } else out[k] = structuredClone(v);
  }
  for (const k of Object.keys(from)) if (!(k in to) && from[k] !== null) out[k] = null;
  return out;
}

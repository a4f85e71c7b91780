/**
 * What makes two answers the same job, for the rules that pay what is already known about a spec
 * (the reference for the baseline reseeded, a confirmed mean for a spec confirmed before): the
 * spec as validation returns it — defaults filled, the fields its job type ignores dropped
 * (spec/inert.ts) — without its seed. Keyed on the raw answer instead, a patch that restates a
 * default, reorders keys or sets an inert field would count as a new spec and be paid its own
 * single seed.
 */
import { validateSpec } from '../inner/spec-check.js';
import { canonicalJson } from '../util/canonical.js';
import { getPublicTask } from '../tasks/briefs.js';

/** A spec's key with its seed left out (the raw spec's: no validation): two specs that differ only by their seed share it. */
export function seedlessKey(spec: unknown): string {
  const seedless = spec && typeof spec === 'object' && !Array.isArray(spec) ? { ...(spec as Record<string, unknown>), seed: 0 } : spec;
  return canonicalJson(seedless);
}

const MEMO_LIMIT = 4096;
const memo = new Map<string, string>();

/**
 * The identity of `spec` on `task`: the seedless key of the validated spec, or of the spec as it
 * is when it does not validate (or the task is unknown here), so an invalid answer is only ever
 * the same as itself.
 */
export function specIdentity(spec: unknown, task: string): string {
  const raw = seedlessKey(spec);
  const memoKey = `${task}\u0000${raw}`;
  const known = memo.get(memoKey);
  if (known !== undefined) return known;
  let key = raw;
  try {
    const checked = validateSpec(spec, getPublicTask(task).brief);
    if (checked.ok) key = seedlessKey(checked.spec);
  } catch {
    // an unknown task: the raw key
  }
  if (memo.size >= MEMO_LIMIT) memo.delete(memo.keys().next().value as string);
  memo.set(memoKey, key);
  return key;
}

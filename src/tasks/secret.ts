import { mixSeed } from '../util/rng.js';

/**
 * The harness's evaluation secret, from which every held-out seed is derived. Set
 * RRL_EVAL_SECRET to an integer of your own to draw a different held-out set; job code
 * never receives it (jobs get only their spec).
 */
export function evalSecret(): number {
  const raw = process.env.RRL_EVAL_SECRET;
  if (raw !== undefined && raw !== '') {
    const v = Number(raw);
    if (!Number.isInteger(v)) throw new Error(`RRL_EVAL_SECRET must be an integer, got "${raw}"`);
    return v >>> 0;
  }
  return 0x6a09e667;
}

/** `count` held-out episode seeds for a task, derived from the secret and the task id. */
export function heldOutSeeds(taskId: string, count: number): number[] {
  let h = 0;
  for (const ch of taskId) h = mixSeed(h, ch.codePointAt(0) ?? 0);
  const secret = evalSecret();
  // Held-out seeds live above 2^31 so no spec seed (bounded to 2^31 - 1) can name them.
  return Array.from({ length: count }, (_, i) => (mixSeed(secret, h, i) | 0x80000000) >>> 0);
}

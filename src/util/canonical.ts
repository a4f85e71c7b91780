/** Canonical JSON: the same value always gives the same text, whatever the order of its keys. */

/** `v` with every object's keys sorted (arrays keep their order). */
export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** The canonical JSON text of `v` (keys sorted at every level). */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(canonical(v));
}

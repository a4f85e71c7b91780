/**
 * The job spec inside a completion as small language models write it: the first complete JSON
 * object in the text, whether it stands alone, sits in prose or a Markdown code fence, or follows
 * a `<think>…</think>` block (whose own braces are skipped). The scan is bounded: at most
 * `MAX_CANDIDATES` opening braces are tried and a candidate nested deeper than `MAX_DEPTH` is
 * dropped before `JSON.parse` sees it, so any text costs a few passes over it at most.
 */

/** How many opening braces are tried as the start of the object. */
export const MAX_CANDIDATES = 32;
/** Deepest nesting of a candidate (a job spec is 4 levels deep). */
export const MAX_DEPTH = 32;

/** The first JSON object in `text`, or why there is none (one line). */
export function extractJsonObject(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  // A closed reasoning block is skipped; an unclosed one leaves the whole text to search.
  const close = text.indexOf('</think>');
  const body = text.trimStart().startsWith('<think>') && close >= 0 ? text.slice(close + '</think>'.length) : text;
  let from = 0;
  let tried = 0;
  let lastError = '';
  while (tried < MAX_CANDIDATES) {
    const start = body.indexOf('{', from);
    if (start < 0) break;
    tried += 1;
    const end = matchingBrace(body, start);
    if (end > 0) {
      try {
        const value: unknown = JSON.parse(body.slice(start, end + 1));
        if (value && typeof value === 'object' && !Array.isArray(value)) return { ok: true, value: value as Record<string, unknown> };
      } catch (err) {
        lastError = ` (the first candidate is not JSON: ${(err as Error).message.slice(0, 120)})`;
      }
    } else if (end === -2) {
      lastError = ` (an object nested deeper than ${MAX_DEPTH} levels)`;
    }
    from = start + 1;
  }
  if (tried === 0) return { ok: false, error: 'the completion holds no JSON object; expected the job spec as one JSON object' };
  return { ok: false, error: `the completion holds no complete JSON object${lastError}; expected the job spec as one JSON object`.replace(/[\r\n]+/g, ' ') };
}

/** Index of the brace closing the object opened at `start`; -1 when it never closes, -2 when too deep. */
function matchingBrace(s: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i += 1;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > MAX_DEPTH) return -2;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      if (--depth === 0) return c === 125 ? i : -1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

/**
 * Untrusted text inside a brief (a table's documentation, a column's description): quoted between
 * the data delimiter `⟪` … `⟫` as one line, after everything that could end the quote or pose as
 * the prompt's structure is neutralised — the delimiter's own characters, angle brackets (role
 * tags such as `<|im_start|>` and `</data>`), backtick fences and line breaks (a planted
 * "system:" line or heading). Cut to a character budget, the closing delimiter included, so
 * that a brief's length bound holds whatever the text.
 */

/** Opens quoted untrusted text in a brief. */
export const DATA_OPEN = '⟪';
/** Closes it; it never occurs inside. */
export const DATA_CLOSE = '⟫';

/** The text with nothing left that could close the quote or read as the prompt's own markup. */
export function neutralise(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/[⟪⟫《》«»]/g, '"')
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(/`+/g, "'")
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * `text` quoted as data: `⟪…⟫`, neutralised, at most `maxChars` characters in all (cut at a word
 * with `…` when longer). `maxChars` below 3 gives the empty quote.
 */
export function quoteUntrusted(text: string, maxChars: number): string {
  const body = neutralise(text);
  const room = Math.max(0, maxChars - DATA_OPEN.length - DATA_CLOSE.length);
  if ([...body].length <= room) return `${DATA_OPEN}${body}${DATA_CLOSE}`;
  const chars = [...body].slice(0, Math.max(0, room - 1)).join('');
  const cut = chars.lastIndexOf(' ') > room / 2 ? chars.slice(0, chars.lastIndexOf(' ')) : chars;
  return `${DATA_OPEN}${cut}${room > 0 ? '…' : ''}${DATA_CLOSE}`;
}

/**
 * Rejecting an expression: `ExpressionError` and its one-line message, which quotes the
 * offending token or sub-expression as written and says where it stands. mathjs's nodes carry
 * no positions, so a node's printed form is found again in the source with a small lexer.
 */

/** Thrown when an expression is rejected. */
export class ExpressionError extends Error {
  /** The source text of the rejected expression. */
  readonly expression: string;
  /** The offending token or sub-expression as written, e.g. `"="`, `"x.constructor"`, `"2^400"`. */
  readonly token: string;
  /** Why it was rejected, in words. */
  readonly reason: string;
  /** Character index (0-based) of `token` in `expression`, when known. */
  readonly position?: number;

  /** Builds the error and its readable message. `label` names the expression ("reward expression"). */
  constructor(expression: string, token: string, reason: string, position?: number, label = 'reward expression') {
    super(formatMessage(label, token, reason, position));
    this.name = 'ExpressionError';
    this.expression = expression;
    this.token = token;
    this.reason = reason;
    if (position !== undefined) this.position = position;
  }
}

/** A token of the source: its kind, text, value and span. */
export interface Tok {
  readonly kind: 'num' | 'id' | 'str' | 'op';
  readonly text: string;
  readonly value: number | string;
  readonly start: number;
  readonly end: number;
}

const SKIP_RE = /(?:\s+|#[^\n]*)+/y;
const NUM_RE = /0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const ID_RE = /[\p{L}_$][\p{L}\p{N}_$]*/uy;
const STR_RE = /"(?:[^"\\]|\\[\s\S])*"|'(?:[^'\\]|\\[\s\S])*'/y;
const OP_RE = /==|!=|<=|>=|\.\*|\.\/|\.\^|<<|>>>|>>|\?\?|\^\||[\s\S]/uy;

function matchAt(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at;
  const m = re.exec(text);
  return m === null ? null : m[0];
}

/** A small lexer close enough to mathjs's to find tokens again in the source. */
export function lex(text: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < text.length) {
    const skip = matchAt(SKIP_RE, text, i);
    if (skip !== null && skip.length > 0) {
      i += skip.length;
      continue;
    }
    let m: string | null;
    if ((m = matchAt(NUM_RE, text, i)) !== null) {
      out.push({ kind: 'num', text: m, value: Number(m), start: i, end: i + m.length });
    } else if ((m = matchAt(ID_RE, text, i)) !== null) {
      if (m === 'Infinity' || m === 'NaN') out.push({ kind: 'num', text: m, value: Number(m), start: i, end: i + m.length });
      else out.push({ kind: 'id', text: m, value: m, start: i, end: i + m.length });
    } else if ((m = matchAt(STR_RE, text, i)) !== null) {
      out.push({ kind: 'str', text: m, value: m.slice(1, -1), start: i, end: i + m.length });
    } else {
      m = matchAt(OP_RE, text, i) ?? text[i];
      out.push({ kind: 'op', text: m, value: m, start: i, end: i + m.length });
    }
    i += m.length;
  }
  return out;
}

function sameToken(a: Tok, b: Tok): boolean {
  if (a.kind === 'num' || b.kind === 'num') return a.kind === b.kind && Object.is(a.value, b.value);
  if (a.kind === 'op' || b.kind === 'op') return a.kind === b.kind && a.text === b.text;
  return a.value === b.value; // id or string: `{a: 1}` prints as `{"a": 1}`
}

const isParen = (t: Tok): boolean => t.kind === 'op' && (t.text === '(' || t.text === ')');

/**
 * Finds `needle` (a node's printed form) in `source`, comparing token by token; a parenthesis
 * on either side may be missing on the other (mathjs's printer adds some and drops none), and
 * the match starts at a real token. Returns the source text and its index, or null.
 */
export function locate(source: string, needle: string): { text: string; start: number } | null {
  const all = lex(source);
  const printed = lex(needle);
  const enclosing = outerParens(printed); // matched last, as whole pairs around the core
  const want = printed.slice(enclosing, printed.length - enclosing);
  const k0 = want.findIndex((t) => !isParen(t));
  if (k0 < 0) return null;
  outer: for (let s = 0; s < all.length; s++) {
    if (!sameToken(all[s], want[k0])) continue;
    let first = s;
    let last = s;
    for (let i = s + 1, k = k0 + 1; k < want.length; ) {
      if (i < all.length && sameToken(all[i], want[k])) {
        last = i++;
        k++;
      } else if (isParen(want[k])) k++;
      else if (i < all.length && isParen(all[i])) i++;
      else continue outer;
    }
    let depth = 0;
    for (let i = first; i <= last; i++) if (isParen(all[i])) depth += all[i].text === '(' ? 1 : -1;
    while (depth > 0 && last + 1 < all.length && all[last + 1].text === ')') {
      last++;
      depth--;
    }
    while (depth < 0 && first > 0 && all[first - 1].text === '(') {
      first--;
      depth++;
    }
    // A parenthesised node: take as many enclosing pairs as the printed form has.
    for (let k = enclosing; k > 0 && first > 0 && last + 1 < all.length; k--) {
      if (all[first - 1].text !== '(' || all[last + 1].text !== ')') break;
      first--;
      last++;
    }
    return { text: source.slice(all[first].start, all[last].end), start: all[first].start };
  }
  return null;
}

/** How many pairs of parentheses enclose all of `toks`, e.g. 2 for "((x))", 0 for "(a) + (b)". */
function outerParens(toks: readonly Tok[]): number {
  let k = 0;
  while (k < toks.length / 2 && toks[k].text === '(' && toks[toks.length - 1 - k].text === ')') {
    let depth = 0;
    let closesAtEnd = true;
    for (let i = k; i < toks.length - k; i++) {
      if (toks[i].text === '(') depth++;
      else if (toks[i].text === ')') depth--;
      if (depth === 0 && i < toks.length - k - 1) {
        closesAtEnd = false;
        break;
      }
    }
    if (!closesAtEnd) break;
    k++;
  }
  return k;
}

/** `text` on one line (control characters escaped), at most `max` characters. */
function printable(text: string, max: number): string {
  const s = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => (c === '\n' ? '\\n' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  return s.length > max ? `${s.slice(0, max - 3)}...` : s;
}

/** The error's one-line message: what was rejected, where, and why. */
function formatMessage(label: string, token: string, reason: string, position: number | undefined): string {
  reason = printable(reason, 240); // mathjs's syntax errors quote the source, line breaks included
  const shown = token.length > 60 ? `${token.slice(0, 57)}...` : token;
  const at = position === undefined ? '' : ` (character ${position})`;
  const where = token !== '' ? ` at ${JSON.stringify(shown)}${at}` : position !== undefined ? ` at the end${at}` : '';
  return `${label} rejected${where}: ${reason}`;
}

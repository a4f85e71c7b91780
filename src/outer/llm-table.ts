/**
 * The language model's held-out table from the evaluations `python -m rrl_client.heldout` wrote
 * (`heldout.json`, owned by the Python side and read here): each term's mean over tasks, and each
 * comparison's paired difference by task with its 90 % Student-t interval (util/paired-difference.ts,
 * the transfer experiment's rule). A term is one column of one or more arms — `LABEL/ARM` where
 * LABEL names an evaluation, joined by `+` to average several (GRPO over its seeds) — so a
 * comparison pairs two columns by task: `s1/grpo+s2/grpo:greedy_confirmed - s1/sft:greedy_confirmed`.
 */
import { type PairedDifference, pairedDifference, pairedVerdict } from '../util/paired-difference.js';

/** One task's cells of one arm and sampling seed, as heldout.json keeps them (a missing job is null). */
type Cells = Record<string, number | null>;

/** What is read of a heldout.json: its tasks and, per arm, the cells per seed and task. */
export interface HeldoutFile {
  tasks: string[];
  arms: Record<string, { per_seed: Record<string, Record<string, Cells>> }>;
}

/** One column of one or more arms: `LABEL/ARM[+LABEL/ARM…][:metric]` (metric default `greedy_confirmed`). */
export interface Term {
  text: string;
  arms: { label: string; arm: string }[];
  metric: string;
}

/** The metric a term without one reads: the greedy job on the harness's confirmation seeds. */
export const DEFAULT_METRIC = 'greedy_confirmed';

/**
 * Parses a term; throws with the expected form. The metric is what follows the last colon when it is
 * a metric's name (no spaces), so an arm named with a colon and a space — the transfer rows,
 * `transfer: optuna TPE seeded` — reads as an arm.
 */
export function parseTerm(text: string): Term {
  const trimmed = text.trim();
  const colon = trimmed.lastIndexOf(':');
  const tail = colon < 0 ? '' : trimmed.slice(colon + 1);
  const named = /^[a-z_0-9]+$/.test(tail);
  const armsText = named ? trimmed.slice(0, colon) : trimmed;
  const metric = named ? tail : DEFAULT_METRIC;
  if (colon === trimmed.length - 1) throw new Error(`"${text}": expected LABEL/ARM[+LABEL/ARM…][:metric]`);
  const arms = armsText.split('+').map((a) => {
    const [label, arm, ...more] = a.trim().split('/');
    if (!label || !arm?.trim() || more.length) throw new Error(`"${a}": expected LABEL/ARM`);
    return { label, arm: arm.trim() };
  });
  return { text: trimmed, arms, metric };
}

/** A comparison `A - B` of two terms. */
export function parsePair(text: string): { a: Term; b: Term } {
  const parts = text.split(' - ');
  if (parts.length !== 2) throw new Error(`"${text}": expected "TERM - TERM" (spaces around the minus)`);
  return { a: parseTerm(parts[0]), b: parseTerm(parts[1]) };
}

/**
 * A term's value per task: the mean over its arms and their sampling seeds of the task's cell, over
 * the cells that have one; null when none has. Throws naming a label or arm that is not there.
 */
export function termByTask(term: Term, files: Record<string, HeldoutFile>, tasks: string[]): (number | null)[] {
  const perArm = term.arms.map(({ label, arm }) => {
    const file = files[label];
    if (!file) throw new Error(`${term.text}: no evaluation labelled "${label}"; labels: ${Object.keys(files).join(', ')}`);
    const a = file.arms[arm];
    if (!a) throw new Error(`${term.text}: evaluation "${label}" has no arm "${arm}"; arms: ${Object.keys(file.arms).join(', ')}`);
    return a.per_seed;
  });
  return tasks.map((task) => {
    const xs = perArm.flatMap((seeds) => Object.values(seeds).map((cells) => cells[task]?.[term.metric] ?? null)).filter((x): x is number => x !== null);
    return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;
  });
}

/** One comparison's result. */
export interface PairRow {
  pair: string;
  difference: PairedDifference | null;
  verdict: ReturnType<typeof pairedVerdict>;
}

/** The table: each term's mean over tasks and each pair's paired difference, over the tasks every evaluation holds. */
export function llmTable(
  files: Record<string, HeldoutFile>,
  pairs: string[],
  extraTerms: string[] = [],
): { tasks: string[]; terms: { term: string; mean: number | null; tasks: number }[]; pairs: PairRow[] } {
  const labels = Object.keys(files);
  if (!labels.length) throw new Error('no evaluation given');
  const tasks = files[labels[0]].tasks.filter((t) => labels.every((l) => files[l].tasks.includes(t)));
  const parsed = pairs.map(parsePair);
  const termTexts = [...new Set([...extraTerms, ...parsed.flatMap((p) => [p.a.text, p.b.text])])];
  const terms = termTexts.map((text) => {
    const v = termByTask(parseTerm(text), files, tasks).filter((x): x is number => x !== null);
    return { term: text, mean: v.length ? v.reduce((s, x) => s + x, 0) / v.length : null, tasks: v.length };
  });
  const rows = parsed.map(({ a, b }) => {
    const difference = pairedDifference(termByTask(a, files, tasks), termByTask(b, files, tasks));
    return { pair: `${a.text} − ${b.text}`, difference, verdict: pairedVerdict(difference) };
  });
  return { tasks, terms, pairs: rows };
}

const fmt = (x: number | null | undefined, signed = false): string =>
  x === null || x === undefined ? '–' : `${signed && x >= 0 ? '+' : ''}${x.toFixed(3).replace('-', '−')}`;

/** The table as Markdown: the terms' means, then the paired differences with their intervals and verdicts. */
export function llmTableMarkdown(t: ReturnType<typeof llmTable>): string {
  const lines = [
    `Over ${t.tasks.length} tasks (each arm's sampling seeds averaged per task; a task without a scored job is left out of that term).`,
    '',
    '| term | mean | tasks |',
    '| --- | ---: | ---: |',
    ...t.terms.map((r) => `| \`${r.term}\` | ${fmt(r.mean)} | ${r.tasks} |`),
    '',
    '| comparison, paired by task | difference [90 % interval] | pairs | verdict |',
    '| --- | --- | ---: | --- |',
    ...t.pairs.map((r) => {
      const d = r.difference;
      const ci = d && d.lo !== null ? ` [${fmt(d.lo, true)}, ${fmt(d.hi, true)}]` : '';
      return `| \`${r.pair}\` | ${fmt(d?.mean, true)}${ci} | ${d?.n ?? 0} | ${r.verdict ?? 'not judged'} |`;
    }),
  ];
  return `${lines.join('\n')}\n`;
}

/** The begin and end markers of a document's generated table. */
export const TABLE_MARKERS = { begin: '<!-- llm-table:begin -->', end: '<!-- llm-table:end -->' } as const;

/** `doc` with the text between its table markers replaced by `table`; throws when the markers are missing. */
export function replaceTable(doc: string, table: string): string {
  const i = doc.indexOf(TABLE_MARKERS.begin);
  const j = doc.indexOf(TABLE_MARKERS.end);
  if (i < 0 || j < i) throw new Error(`the document has no ${TABLE_MARKERS.begin} … ${TABLE_MARKERS.end} section`);
  return `${doc.slice(0, i + TABLE_MARKERS.begin.length)}\n${table}${doc.slice(j)}`;
}

/**
 * The patch form of the prompt for small models: the task, its documentation cut to a character
 * budget (`docChars`; 0 drops it), the table's variables by name and kind, the current job (the
 * task's baseline spec, compactly, or an episode's last valid job), what may change and what each
 * choice means in a few words, and the request for a JSON Merge Patch of only the fields to
 * change, with one example patch that is valid for the task and changes the job. The answer is
 * read by outer/answer.ts. Built from the public brief only.
 */
import type { TaskBrief } from '../../spec/brief.js';
import { jobSpecJsonSchema } from '../../spec/schema.js';
import { type JsonObject, applyMergePatch, isJsonObject } from '../../spec/patch.js';
import { validateSpec } from '../../inner/spec-check.js';
import { isUnchanged } from '../answer.js';
import type { ChatMessage } from './types.js';

type Node = { [key: string]: unknown };

/** Characters of the task's documentation the patch prompt shows by default (about 200 tokens; a corpus brief spends about 300 of its characters on its own framing). */
export const DOC_CHARS = 800;
/** Most characters of the documentation a prompt may ask for: a corpus brief's whole description. */
export const MAX_DOC_CHARS = 1600;
/** Most characters of the variables line (names and kinds): a wide table's list is cut there. */
export const VARIABLE_CHARS = 400;

/** `text` cut at a word boundary to at most `max` characters; an open data quote (`⟪`) is closed. */
export function cutText(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const room = chars.slice(0, Math.max(0, max - 2)).join('');
  const at = room.lastIndexOf(' ');
  const cut = at > room.length / 2 ? room.slice(0, at) : room;
  const open = (cut.match(/⟪/g) ?? []).length > (cut.match(/⟫/g) ?? []).length;
  return `${cut}…${open ? '⟫' : ''}`;
}

/** `text`'s first sentence, cut at a word boundary to at most `max` characters. */
function clip(text: string, max: number): string {
  const first = text.split(/(?<=[.;])\s/)[0].replace(/[.;]$/, '');
  if (first.length <= max) return first;
  const cut = first.slice(0, max - 1);
  return `${cut.slice(0, cut.lastIndexOf(' ') > max / 2 ? cut.lastIndexOf(' ') : cut.length)}…`;
}

/** The algorithm alternatives of the spec's schema, by name. */
function algorithmSchemas(): Map<string, Node> {
  const algo = (jobSpecJsonSchema() as { properties: Record<string, Node> }).properties.algorithm;
  const alts = (algo.oneOf ?? algo.anyOf ?? []) as { properties: Record<string, Node> }[];
  return new Map(alts.map((a) => [String(a.properties.name.const), a.properties]));
}

/** The step-size field of an algorithm (`learningRate`, or ARS's `stepSize`) and its bounds. */
function stepField(algorithm: string): { name: string; min: number; max: number } | null {
  const props = algorithmSchemas().get(algorithm);
  const name = ['learningRate', 'stepSize'].find((k) => props?.[k]);
  if (!props || !name) return null;
  const n = props[name] as { minimum: number; maximum: number };
  return { name, min: n.minimum, max: n.maximum };
}

/** The baseline's algorithm name, when it has one. */
function algorithmOf(baseline: unknown): string {
  const a = isJsonObject(baseline) ? baseline.algorithm : undefined;
  return isJsonObject(a) && typeof a.name === 'string' ? a.name : '';
}

/** What a job may change, one line each, with what each choice means in a few words. */
function choices(brief: TaskBrief, baseline: unknown): string[] {
  const algos = algorithmSchemas();
  const names = brief.algorithms.map((a) => `${a} (${clip(String((algos.get(a)?.name as Node | undefined)?.description ?? a), 40).replace(/ \(.*$/, '')})`);
  const lines = brief.algorithms.length > 1 ? [`- algorithm.name: ${names.join(', ')}; another needs all its own fields`] : [];
  const step = stepField(algorithmOf(baseline));
  if (step) lines.push(`- algorithm.${step.name}: ${step.min} to ${step.max}`);
  lines.push('- model.hidden: up to 4 widths of 1 to 512 ([] is linear); model.activation: tanh or relu');
  if (brief.kind === 'control') {
    lines.push(`- budget.envSteps: at most ${brief.budget.maxEnvSteps}`);
    if (brief.environment.params.length) {
      lines.push('- environment.params (a number, or [low, high] drawn each episode):');
      for (const p of brief.environment.params) lines.push(`  ${p.name}: ${clip(p.description, 40)}, ${p.min} to ${p.max}`);
    }
  } else {
    lines.push(`- budget.examples: at most ${brief.budget.maxExamples ?? 0}`);
    lines.push('- dataset.sources (a list, replaced whole; each {"id", "weight"}):');
    for (const s of brief.supervised?.sources ?? []) lines.push(`  ${s.id} (${s.examples}): ${clip(s.description, 44)}`);
  }
  return lines;
}

/**
 * An example patch for the task: valid over `baseline` and not a no-op (the step size scaled,
 * else a smaller network); null when neither edit makes a valid, changed job.
 */
export function examplePatch(brief: TaskBrief, baseline: unknown): JsonObject | null {
  const step = stepField(algorithmOf(baseline));
  const current = isJsonObject(baseline) && isJsonObject(baseline.algorithm) ? baseline.algorithm[step?.name ?? ''] : undefined;
  const candidates: JsonObject[] = [];
  if (step && typeof current === 'number') {
    for (const f of [3, 0.3]) {
      const v = Number((current * f).toPrecision(2));
      if (v >= step.min && v <= step.max) candidates.push({ algorithm: { [step.name]: v } });
    }
  }
  candidates.push({ model: { hidden: [32] } }, { model: { hidden: [128, 128] } });
  for (const patch of candidates) {
    const spec = applyMergePatch(baseline, patch);
    if (validateSpec(spec, brief).ok && !isUnchanged(spec, brief, baseline)) return patch;
  }
  return null;
}

/** A supervised task's target and variables by name and kind (never their meanings), cut to `VARIABLE_CHARS`. */
function variablesLine(brief: TaskBrief): string[] {
  const s = brief.supervised;
  if (!s) return [];
  const target = s.target.type === 'classification' ? `classification into ${s.target.classes?.length ?? 0} classes` : 'regression';
  const kinds = new Map((s.columns ?? []).map((c) => [c.name, c]));
  const named = s.features.map((f) => {
    const c = kinds.get(f.name);
    if (!c) return f.name;
    const facts = [
      c.kind === 'categorical' ? `categorical, ${c.levels} levels` : 'numeric',
      ...(c.missing > 0 ? [`${Math.round(c.missing * 100)}% missing`] : []),
    ];
    return `${f.name} (${facts.join(', ')})`;
  });
  const head = `Predict ${s.target.name} (${target}) from ${named.length} variables: `;
  // The longest run of names that fits with the note of how many are left out.
  const shown: string[] = [];
  for (const name of named) {
    const left = named.length - shown.length - 1;
    const note = left ? ` … and ${left} more` : '';
    if (head.length + [...shown, name].join(', ').length + note.length > VARIABLE_CHARS) break;
    shown.push(name);
  }
  const left = named.length - shown.length;
  return [`${head}${shown.join(', ')}${left ? ` … and ${left} more` : ''}`];
}

/** What the prompt says of the task: its title and documentation within `docChars`, or (0) its id alone. */
function taskLines(brief: TaskBrief, docChars: number): string[] {
  if (docChars <= 0) return [`Task "${brief.id}".`];
  return [`Task "${brief.title}".`, `About it: ${cutText(brief.description, docChars)}`];
}

/** How the patch prompt says what the task is. */
export interface PatchPromptOptions {
  /** Characters of the task's documentation shown (default `DOC_CHARS`); 0 drops the title, description and meanings, keeping names, kinds and caps. */
  docChars?: number;
}

/**
 * The patch prompt's messages: `current` is the job shown (the baseline spec, compactly written,
 * or an episode's last valid job), `baseline` the spec the example patch is checked against.
 */
export function patchPrompt(brief: TaskBrief, current: unknown, baseline: unknown, options: PatchPromptOptions = {}): ChatMessage[] {
  const example = examplePatch(brief, baseline);
  const docChars = Math.min(MAX_DOC_CHARS, Math.max(0, Math.floor(options.docChars ?? DOC_CHARS)));
  const user = [
    ...taskLines(brief, docChars),
    ...variablesLine(brief),
    `Scored by: ${clip(brief.metric.split(/[;,(]/)[0].trim(), 100)}.`,
    'The current training job:',
    JSON.stringify(current),
    'What you may change:',
    ...choices(brief, baseline),
    'Reply with a JSON merge patch of the current job: only the fields to change, nested as in the job (null removes one).' +
      (example ? ` Example: ${JSON.stringify(example)}` : ''),
    'JSON only.',
  ].join('\n');
  return [
    { role: 'system', content: 'You are a helpful assistant that writes JSON.' },
    { role: 'user', content: user },
  ];
}

/** What the next round's turn says of a job: what a practitioner sees of it, never a hidden score or a reward. */
export interface RoundSeen {
  submission: number;
  status: 'succeeded' | 'invalid' | 'failed' | 'unscorable';
  reason: string | null;
  unchanged: boolean;
  cost: { envSteps: number | null; examples: number | null; wallSeconds: number | null };
  validation: { name: string; value: number } | null;
}

/** Most characters of a job's reason in a round's turn. */
const ROUND_REASON_CHARS = 240;

/**
 * The user turn after job `seen` of an episode: the job's status, reason, own validation figure
 * and cost in one line; then, while `left` jobs remain, the job the next patch applies to
 * (`current`: the episode's last valid job, written compactly by the caller as the patch prompt
 * shows its job) and the request for a patch over it.
 */
export function roundTurn(seen: RoundSeen, current: unknown, left: number): string {
  const facts: string[] = [seen.status];
  if (seen.reason) facts.push(cutText(seen.reason.replace(/\s+/g, ' '), ROUND_REASON_CHARS));
  if (seen.unchanged) facts.push("the baseline's job, seed aside");
  if (seen.validation) facts.push(`${seen.validation.name} ${Number(seen.validation.value.toPrecision(4))} on its own validation data`);
  const cost = [
    ...(seen.cost.examples ? [`${seen.cost.examples} examples`] : []),
    ...(seen.cost.envSteps ? [`${seen.cost.envSteps} env steps`] : []),
    ...(seen.cost.wallSeconds !== null ? [`${seen.cost.wallSeconds.toFixed(1)} s`] : []),
  ];
  if (cost.length) facts.push(`cost ${cost.join(', ')}`);
  const line = `Job ${seen.submission}: ${facts.join('; ')}.`;
  if (left <= 0) return `${line}\nNo jobs left in this episode.`;
  return [
    line,
    `The current training job (your last valid one${seen.status === 'invalid' ? '; the invalid one was not applied' : ''}):`,
    JSON.stringify(current),
    `Reply with a JSON merge patch of the current job: only the fields to change. ${left} job${left === 1 ? '' : 's'} left. JSON only.`,
  ].join('\n');
}

/**
 * The patch form of the prompt for small models (about 350 tokens at most): the task in one
 * line, the current job (the task's baseline spec, compactly), what may change and what each
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

/**
 * The patch prompt's messages: `current` is the job shown (the baseline spec, compactly written),
 * `baseline` the spec the example patch is checked against.
 */
export function patchPrompt(brief: TaskBrief, current: unknown, baseline: unknown): ChatMessage[] {
  const example = examplePatch(brief, baseline);
  const what = clip(brief.description, 100);
  const user = [
    `Task "${brief.title}": ${what}${what.endsWith('…') ? '' : '.'}`,
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

/**
 * The LLM trainer agent's prompt: its role, the task's brief, the catalog of what it may
 * choose, the job spec's fields (from the same zod schema that validates the reply) and,
 * when asked, its own earlier jobs on the task with their rewards (OPRO-style in-context
 * improvement). Built from the public brief only: nothing of the hidden evaluation.
 */
import { isDeepStrictEqual } from 'node:util';
import { validateSpec } from '../../inner/spec-check.js';
import type { TaskBrief } from '../../spec/brief.js';
import { jobSpecJsonSchema } from '../../spec/schema.js';
import { ALLOWED_FUNCTIONS, EXPRESSION_LIMITS } from '../../inner/expr/expression.js';
import { REWARD_RULE } from '../reward.js';
import { patchPrompt } from './patch-prompt.js';
import type { ChatMessage } from './types.js';

/** One earlier job of this run on the task, as the prompt shows it. */
export interface PromptHistoryItem {
  spec: unknown;
  reward: number | null;
  status?: string;
  error?: string | null;
}

/** What `buildPrompt` includes beside the brief. */
export interface PromptOptions {
  /** Earlier jobs on this task; shown only when `historyLimit` > 0. */
  history?: PromptHistoryItem[];
  /** How many earlier jobs to show (the best ones, by reward); 0 shows none. */
  historyLimit?: number;
  /**
   * The compact form for small models: one valid spec to edit (`example`), the task's title and
   * one line of what may change, instead of the brief, the catalog and the schema's fields; no history.
   */
  compact?: boolean;
  /**
   * The patch form for small models (outer/agents/patch-prompt.ts): the current job (`example`,
   * the task's baseline spec), what may change, and the request for a JSON merge patch over it.
   */
  patch?: boolean;
  /** A valid spec for the task shown in the compact and patch forms (the task's public baseline spec). */
  example?: unknown;
  /** The patch form's documentation budget in characters (patch-prompt.ts `DOC_CHARS` by default; 0 drops it). */
  docChars?: number;
}

type JsonSchema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema | false;
  prefixItems?: JsonSchema[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  additionalProperties?: JsonSchema | boolean;
};

/** The type and bounds of one schema leaf, in a few words. */
function shape(s: JsonSchema): string {
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return alts.map((a) => (a.description ? `${shape(a)} (${a.description})` : shape(a))).join(' or ');
  const type = Array.isArray(s.type) ? s.type.join(' | ') : (s.type ?? 'any');
  const bounds: string[] = [];
  if (s.minimum !== undefined || s.maximum !== undefined) bounds.push(`${s.minimum ?? '-inf'}..${s.maximum ?? 'inf'}`);
  if (s.maxLength !== undefined) bounds.push(`at most ${s.maxLength} characters`);
  if (type === 'array' && s.prefixItems) return `[${s.prefixItems.map(shape).join(', ')}]`;
  if (type === 'array' && s.items) return `array of ${shape(s.items)}${s.maxItems !== undefined ? ` (at most ${s.maxItems})` : ''}`;
  if (type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object') {
    const value = s.additionalProperties;
    return `object: name -> ${value.description ? `${value.description}: ` : ''}${shape(value)}`;
  }
  return bounds.length ? `${type} ${bounds.join(', ')}` : type;
}

/** One line per field of the schema, `- path (shape; default d): description`, depth first. */
function fieldLines(s: JsonSchema, path: string, out: string[]): void {
  for (const [key, sub] of Object.entries(s.properties ?? {})) {
    const p = path ? `${path}.${key}` : key;
    const variants = sub.oneOf ?? sub.anyOf;
    const optional = !(s.required ?? []).includes(key);
    const extra = sub.default !== undefined ? `; default ${JSON.stringify(sub.default)}` : optional ? '; optional' : '';
    if (sub.properties) {
      out.push(`- ${p} (object${extra}): ${sub.description ?? ''}`);
      fieldLines(sub, p, out);
    } else if (variants?.every((v) => v.properties)) {
      out.push(`- ${p}: ${sub.description ?? ''}; one of the following, chosen by its "name"`);
      for (const v of variants) {
        const name = v.properties?.name?.const;
        out.push(`- ${p} with name ${JSON.stringify(name)}: ${v.description ?? ''}`);
        fieldLines(v, p, out);
      }
    } else if (sub.type === 'array' && sub.items && sub.items.properties) {
      out.push(`- ${p} (array of objects${sub.maxItems !== undefined ? `, at most ${sub.maxItems}` : ''}${extra}): ${sub.description ?? ''}`);
      fieldLines(sub.items, `${p}[]`, out);
    } else {
      out.push(`- ${p} (${shape(sub)}${extra}): ${sub.description ?? ''}`);
    }
  }
}

/** The job spec's fields with their types, bounds, defaults and descriptions, one per line. */
export function describeSpecFields(): string {
  const schema = jobSpecJsonSchema() as JsonSchema;
  const out: string[] = [`The spec (an object): ${schema.description ?? ''}`];
  fieldLines(schema, '', out);
  return out.join('\n');
}

/** The catalog: everything the brief lets a job choose, with ranges and caps. */
function catalog(brief: TaskBrief): string {
  const lines: string[] = [];
  lines.push(`- algorithm.name: one of ${brief.algorithms.join(', ')}`);
  if (brief.kind === 'control') {
    lines.push(`- budget.envSteps: at most ${brief.budget.maxEnvSteps} environment steps (required)`);
    lines.push(`- environment.params (fixed value or [low, high] range within the declared range):`);
    if (!brief.environment.params.length) lines.push('  none: this task has no tunable parameters');
    for (const p of brief.environment.params) lines.push(`  - ${p.name}: ${p.description}; default ${p.default}; range [${p.min}, ${p.max}]`);
    lines.push(`- environment.wrappers: ${brief.environment.wrappers.length ? brief.environment.wrappers.join(', ') : 'none offered'}`);
    lines.push(`- dataset.demonstrations (behaviour-cloning warm start for ppo; or null):`);
    if (!brief.demonstrations.length) lines.push('  none offered: use null');
    for (const d of brief.demonstrations) lines.push(`  - ${d.id}: ${d.description}`);
    lines.push('- dataset.sources: must be [] (control tasks take no dataset sources); reward.objective must be left out');
  } else {
    const info = brief.supervised;
    lines.push(`- budget.examples: at most ${brief.budget.maxExamples ?? 0} training examples processed, summed over epochs (required)`);
    if (info) {
      const classes = info.target.classes ? `; classes ${info.target.classes.join(', ')}` : '';
      lines.push(`- target: ${info.target.name} (${info.target.type}${classes}): ${info.target.description}`);
      const objectives = info.target.type === 'classification' ? 'cross-entropy or focal' : 'mse or huber';
      lines.push(`- reward.objective: ${objectives} (required); reward.expression must be left out`);
      lines.push('- dataset.sources (choose at least one, each with a mixture weight):');
      for (const s of info.sources) lines.push(`  - ${s.id} (${s.examples} examples): ${s.description}`);
    }
    lines.push('- dataset.demonstrations: must be null (supervised tasks take dataset.sources)');
  }
  lines.push(`- wall-clock cap per job: ${brief.budget.maxWallSeconds} s`);
  const what =
    brief.kind === 'control' ? 'reward.expression (required): the training reward per step' : 'reward.weight (optional, or null): a per-example loss weight';
  lines.push(`- ${what}, a math expression over these variables only:`);
  for (const v of brief.rewardVariables) lines.push(`  - ${v.name}: ${v.description}`);
  lines.push(
    `  Allowed: numbers, those variables, + - * / %, ^ with a constant exponent up to ${EXPRESSION_LIMITS.maxExponent}, ` +
      'comparisons, and / or / not, c ? a : b, ' +
      `and the functions ${ALLOWED_FUNCTIONS.join(', ')}. Nothing else (no property access, strings, assignments or other names); ` +
      `at most ${EXPRESSION_LIMITS.maxLength} characters.`,
  );
  return lines.join('\n');
}

/** The brief's own description of the task: what is observed and acted on, and the metric in words. */
function taskSection(brief: TaskBrief): string {
  const lines = [
    `- id: ${brief.id} (write exactly this in the spec's "task" field)`,
    `- title: ${brief.title}`,
    `- kind: ${brief.kind}`,
    `- description: ${brief.description}`,
    `- ${brief.kind === 'control' ? `environment: ${brief.environment.id}; observation` : 'features'}:`,
    ...brief.environment.observation.map((v) => `  - ${v.name}: ${v.description}`),
    `- actions: ${brief.environment.actions}`,
    `- how the trained model is judged (on a hidden evaluation you never see): ${brief.metric}`,
  ];
  return lines.join('\n');
}

/** Earlier jobs, best last, each with its reward and, when it failed, why. */
function historySection(history: PromptHistoryItem[], limit: number): string | null {
  const paid = history.filter((h) => h.reward !== null);
  if (!paid.length || limit <= 0) return null;
  const shown = [...paid]
    .sort((a, b) => (b.reward as number) - (a.reward as number))
    .slice(0, limit)
    .reverse();
  const lines = [`Your earlier jobs on this task (${shown.length} of ${paid.length}, sorted by reward, best last):`];
  shown.forEach((h, i) => {
    const spec = typeof h.spec === 'string' ? `(not a spec) ${JSON.stringify(h.spec.slice(0, 200))}` : JSON.stringify(h.spec);
    const why = h.error ? `; ${h.status ?? 'failed'}: ${h.error.slice(0, 300)}` : '';
    lines.push(`${i + 1}. reward ${(h.reward as number).toFixed(3)}${why}\n   ${spec}`);
  });
  lines.push('Write a job that earns a higher reward than all of these.');
  return lines.join('\n');
}

/** What a job may change, in one line of names and ranges (for small models' short attention). */
function compactChoices(brief: TaskBrief): string {
  if (brief.kind === 'supervised') {
    const sources = brief.supervised?.sources.map((s) => s.id).join(', ') ?? '';
    return `The data sources it may use: ${sources}; at most ${brief.budget.maxExamples ?? 0} training examples.`;
  }
  const params = brief.environment.params.map((p) => `${p.name} in [${p.min}, ${p.max}]`).join(', ');
  return `Algorithms: ${brief.algorithms.join(', ')}; at most ${brief.budget.maxEnvSteps} environment steps${params ? `; environment params: ${params}` : ''}.`;
}

/** Whether `value` is an empty object, an empty array or null. */
function isEmpty(value: unknown): boolean {
  if (value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value as object).length === 0;
}

/** The paths of `value`'s empty objects, arrays and nulls, deepest first. */
function emptyPaths(value: unknown, at: string[] = []): string[][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const out: string[][] = [];
  for (const [k, v] of Object.entries(value)) {
    out.push(...emptyPaths(v, [...at, k]));
    if (isEmpty(v)) out.push([...at, k]);
  }
  return out;
}

/** A copy of `value` without the field at `path`, and with parents it leaves empty removed too. */
function withoutPath(value: unknown, path: string[]): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  const parents: Record<string, unknown>[] = [copy];
  for (const k of path.slice(0, -1)) parents.push(parents[parents.length - 1][k] as Record<string, unknown>);
  for (let i = path.length - 1; i >= 0; i--) {
    const parent = parents[i];
    if (i < path.length - 1 && !isEmpty(parent[path[i]])) break;
    delete parent[path[i]];
  }
  return copy;
}

/** Whether `value` has a field at `path`. */
function hasPath(value: unknown, path: string[]): boolean {
  let cur = value;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return false;
    cur = (cur as Record<string, unknown>)[k];
  }
  return true;
}

/** The paths of `value`'s fields (arrays as one field), deepest first. */
function fieldPaths(value: unknown, at: string[] = []): string[][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => [...fieldPaths(v, [...at, k]), [...at, k]]);
}

/**
 * The example the compact prompt shows: `spec` without each empty object, empty array and null
 * that the schema's defaults fill back in (the spec parses to the same job without it). A required
 * or meaningful empty value stays (`"hidden": []` is a linear model). Small models copy
 * `"params":{}` badly (they fill it with the fields that follow). With `drop: 'defaults'`, every
 * field the defaults fill back in goes (the patch prompt's shorter view of the current job).
 */
export function compactExample(spec: unknown, brief: TaskBrief, drop: 'empty' | 'defaults' = 'empty'): unknown {
  const full = validateSpec(spec, brief);
  if (!full.ok) return spec;
  let lean = spec;
  for (const path of drop === 'empty' ? emptyPaths(spec) : fieldPaths(spec)) {
    if (!hasPath(lean, path)) continue; // gone with an emptied parent
    const candidate = withoutPath(lean, path);
    const parsed = validateSpec(candidate, brief);
    if (parsed.ok && isDeepStrictEqual(parsed.spec, full.spec)) lean = candidate;
  }
  return lean;
}

/**
 * The compact prompt for small models (about 300 tokens): one valid spec to send back edited, the
 * task's title and one line of what may change. Measured on SmolLM2-135M-Instruct: given the
 * brief's description or a field list it writes prose or code; given an example to edit it writes
 * the example's JSON (see docs/llm-training.md).
 */
function compactPrompt(brief: TaskBrief, example: unknown): ChatMessage[] {
  const user = [
    `This is a valid training job spec for the task "${brief.title}":`,
    JSON.stringify(compactExample(example ?? null, brief)),
    compactChoices(brief),
    'Reply with this same JSON object, changing a few of its values so that it trains a better model. Keep every field. Reply with the JSON only.',
  ].join('\n');
  return [
    { role: 'system', content: 'You are a helpful assistant that writes JSON.' },
    { role: 'user', content: user },
  ];
}

/**
 * The chat messages that ask the model for one job spec for `brief`: a system message with
 * the trainer's role and the reward rule, and a user message with the task, the catalog, the
 * spec's fields and (when `historyLimit` > 0) the agent's own earlier jobs with their rewards.
 */
export function buildPrompt(brief: TaskBrief, options: PromptOptions = {}): ChatMessage[] {
  if (options.patch) {
    return patchPrompt(brief, compactExample(options.example ?? null, brief, 'defaults'), options.example ?? null, { docChars: options.docChars });
  }
  if (options.compact) return compactPrompt(brief, options.example);
  const system = [
    'You are the trainer agent of recursive-rl. You read a task brief and design one complete training job for it:',
    'the environment or data preprocessing, the training reward or loss, the data, the model, the algorithm with its hyperparameters, ' +
      'the compute budget and the seed.',
    "The job is trained for real; the trained model is then scored on a hidden evaluation with the task's canonical metric, " +
      'which you never see and cannot ask for.',
    "Your reward is the job's normalised hidden score compared with the task's baseline job; " +
      `an invalid spec or a failed job (error, timeout, NaN) pays ${REWARD_RULE.failure}.`,
    'Reply with exactly one JSON object, the job spec, and nothing else: no prose, no code fences.',
  ].join(' ');
  const parts = [
    `# Task\n${taskSection(brief)}`,
    `# What you may choose\n${catalog(brief)}`,
    `# Job spec fields (type, bounds, default: description)\n${describeSpecFields()}`,
  ];
  const history = historySection(options.history ?? [], options.historyLimit ?? 0);
  if (history) parts.push(`# History\n${history}`);
  parts.push(
    `# Your answer\nWrite the job spec for task "${brief.id}" as one JSON object ` +
      'with the fields task, environment, reward, dataset, model, algorithm, budget and seed.',
  );
  return [
    { role: 'system', content: system },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

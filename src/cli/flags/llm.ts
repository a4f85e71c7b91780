/**
 * The LLM agent's flags (`rrl train --agent llm`): one table gives the commander options, the
 * type of their values and, through each entry's `setting`, the agent's `LlmOptions`.
 */
import { InvalidArgumentError } from 'commander';
import { LLM_DEFAULTS, PROMPT_FORMS, type LlmOptions, type PromptForm } from '../../outer/agents/llm/options.js';
import { type Flag, type FlagValues, flagTable } from './table.js';
import { int, jsonObject, oneOf, real } from './parse.js';

/** An LLM flag: the `LlmOptions` field its value goes to, and the value that field takes when the flag is not given. */
interface LlmFlag extends Flag {
  readonly setting: keyof LlmOptions;
  readonly unset?: unknown;
}

/** Keeps an LLM table's literal types (see `flagTable`). */
function llmFlagTable<const T extends Readonly<Record<string, LlmFlag>>>(table: T): T {
  return flagTable(table);
}

/**
 * The LLM flags, in the order of `LlmOptions` (the settings object, stored with the run, keeps
 * that order: a run started before this table compares equal on a restart).
 */
export const LLM_FLAGS = llmFlagTable({
  baseUrl: { flag: '--base-url <url>', help: 'llm: the OpenAI-compatible endpoint, e.g. http://localhost:8000/v1', setting: 'baseUrl', unset: '' },
  model: { flag: '--model <name>', help: 'llm: the served model, e.g. Qwen/Qwen3.6-35B-A3B', setting: 'model', unset: '' },
  apiKeyEnv: { flag: '--api-key-env <var>', help: 'llm: environment variable holding the API key', default: LLM_DEFAULTS.apiKeyEnv, setting: 'apiKeyEnv' },
  temperature: {
    flag: '--temperature <t>',
    help: 'llm: sampling temperature',
    parse: real(0, 2),
    default: LLM_DEFAULTS.temperature,
    setting: 'temperature',
  },
  topP: { flag: '--top-p <p>', help: 'llm: nucleus sampling top_p', parse: real(0.01, 1), default: LLM_DEFAULTS.topP, setting: 'topP' },
  maxTokens: {
    flag: '--max-tokens <n>',
    help: 'llm: completion token limit',
    parse: int(16, 1_000_000),
    default: LLM_DEFAULTS.maxTokens,
    setting: 'maxTokens',
  },
  llmN: {
    flag: '--llm-n <n>',
    help: "llm: completions per request (the group's next proposals use the extra ones)",
    parse: int(1, 16),
    default: LLM_DEFAULTS.n,
    setting: 'n',
  },
  llmTimeout: {
    flag: '--llm-timeout <seconds>',
    help: 'llm: per-request timeout',
    parse: real(0.001, 3600),
    default: LLM_DEFAULTS.timeoutSeconds,
    setting: 'timeoutSeconds',
  },
  llmRetries: {
    flag: '--llm-retries <n>',
    help: 'llm: retries of a request after a timeout, connection error, 429 or 5xx',
    parse: int(0, 100),
    default: LLM_DEFAULTS.retries,
    setting: 'retries',
  },
  llmBackoff: {
    flag: '--llm-backoff <ms>',
    help: 'llm: first retry delay (doubled per retry, with jitter; Retry-After wins)',
    parse: int(0, 600_000),
    default: LLM_DEFAULTS.backoffMs,
    setting: 'backoffMs',
  },
  llmHistory: {
    flag: '--llm-history <k>',
    help: 'llm: earlier jobs on the task shown in the prompt with their rewards (0: none)',
    parse: int(0, 1000),
    default: LLM_DEFAULTS.historyLimit,
    setting: 'historyLimit',
  },
  llmLogprobs: { flag: '--no-llm-logprobs', help: 'llm: do not ask for token log-probabilities', setting: 'logprobs' },
  structuredOutput: { flag: '--no-structured-output', help: 'llm: do not send the JSON Schema as response_format', setting: 'structuredOutput' },
  llmPrompt: {
    flag: '--llm-prompt <form>',
    help:
      "llm: auto (the full prompt unless it does not fit the model's context with --max-tokens to spare, then the compact one) | full | compact " +
      '(one valid spec to edit, for small models)',
    default: LLM_DEFAULTS.promptForm,
    setting: 'promptForm',
  },
  llmContext: {
    flag: '--llm-context <tokens>',
    help: "llm: the model's context in tokens (default: ask the server, or learn it when it refuses a prompt as too long)",
    parse: int(256, 10_000_000),
    setting: 'contextTokens',
    unset: null,
  },
  policyUpdateCommand: {
    flag: '--policy-update-command <cmd>',
    help:
      'llm: shell command the agent runs in its update, between iterations, to train a LoRA adapter on the scored batch ' +
      '(env RRL_BATCH, RRL_ADAPTER_DIR, …)',
    setting: 'policyUpdateCommand',
    unset: null,
  },
  llmExtraBody: {
    flag: '--llm-extra-body <json>',
    help: 'llm: JSON object merged into every request, e.g. \'{"chat_template_kwargs":{"enable_thinking":false}}\'',
    parse: jsonObject,
    setting: 'extraBody',
    unset: null,
  },
});

/** The values of the LLM flags as a command receives them. */
export type LlmFlags = FlagValues<typeof LLM_FLAGS>;

/** The settings an LLM table yields: each flag's value under its `setting` name (`unset` when not given). */
type SettingsOf<T extends Readonly<Record<string, LlmFlag>>, V extends Record<keyof T, unknown>> = {
  -readonly [K in keyof T as T[K]['setting']]: T[K] extends { unset: infer U } ? Exclude<V[K], undefined> | U : V[K];
};

/**
 * The LLM agent's settings from its flags, checked: `--base-url` and `--model` are needed unless the
 * run is resumed (`resuming`), the URL must be http(s), and `--llm-prompt` one of the prompt forms.
 */
export function llmOptionsFrom(o: LlmFlags, resuming: boolean): LlmOptions {
  if (!resuming && (!o.baseUrl || !o.model)) throw new InvalidArgumentError('--agent llm needs --base-url URL and --model NAME');
  if (o.baseUrl && !/^https?:\/\//.test(o.baseUrl)) throw new InvalidArgumentError(`--base-url must start with http:// or https://, got "${o.baseUrl}"`);
  const values = { ...o, llmPrompt: oneOf<PromptForm>('--llm-prompt', PROMPT_FORMS, o.llmPrompt) };
  const settings: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(LLM_FLAGS) as [keyof LlmFlags, LlmFlag][]) settings[f.setting] = values[name] ?? f.unset;
  return settings as SettingsOf<typeof LLM_FLAGS, typeof values> satisfies LlmOptions;
}

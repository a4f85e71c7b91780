/**
 * The LLM agent's settings: how it reaches its model, samples from it, which prompt it sends and
 * what trains it between iterations, with the default of every optional one.
 */

/** How the LLM agent reaches its model and samples from it (stored with the run; no secrets). */
export interface LlmOptions {
  /** The server's OpenAI-compatible base URL, e.g. http://localhost:8000/v1. */
  baseUrl: string;
  /** The served base model's name, e.g. Qwen/Qwen3.6-35B-A3B. */
  model: string;
  /** Name of the environment variable holding the API key (the key itself is never stored). */
  apiKeyEnv?: string;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  /** Completions per request (the server's `n`); extra ones serve the group's next proposals. */
  n?: number;
  /** Per-request timeout in seconds. */
  timeoutSeconds?: number;
  /** Retries after a failed request (timeouts, connection errors, 408/409/429/5xx). */
  retries?: number;
  /** First backoff delay in milliseconds (doubled per retry, with jitter). */
  backoffMs?: number;
  /** How many earlier jobs on the task the prompt shows (0: none). */
  historyLimit?: number;
  /** Ask for token log-probabilities (stored when the server returns them). */
  logprobs?: boolean;
  /** Ask for structured output with the job spec's JSON Schema (its grammar form, narrowed to the task). */
  structuredOutput?: boolean;
  /**
   * Which prompt: `full` (brief, catalog, every field, history), `compact` (one valid spec to
   * edit: the best earlier spec on the task, else the task's baseline), or `auto`: the full one
   * unless it does not fit the model's context with `maxTokens` to spare, measured in the model's
   * own tokens (or refused by the server as too long), then the compact one.
   */
  promptForm?: PromptForm;
  /** The model's context in tokens (null: ask the server, or learn it from a refusal). */
  contextTokens?: number | null;
  /** Shell command run between iterations to train a LoRA adapter on the iteration's batch. */
  policyUpdateCommand?: string | null;
  /**
   * Extra fields merged into every request body, for server-specific settings, e.g.
   * `{"chat_template_kwargs": {"enable_thinking": false}}` for Qwen3 on vLLM or SGLang.
   */
  extraBody?: Record<string, unknown> | null;
}

/** The defaults of every optional setting. */
export const LLM_DEFAULTS = {
  apiKeyEnv: 'OPENAI_API_KEY',
  temperature: 1,
  topP: 1,
  maxTokens: 2048,
  n: 1,
  timeoutSeconds: 120,
  retries: 4,
  backoffMs: 1000,
  historyLimit: 8,
  logprobs: true,
  structuredOutput: true,
  promptForm: 'auto',
  contextTokens: null,
} as const;

/** The prompt forms (see `LlmOptions.promptForm`). */
export const PROMPT_FORMS = ['auto', 'full', 'compact'] as const;
/** One of `PROMPT_FORMS`. */
export type PromptForm = (typeof PROMPT_FORMS)[number];

/** Every setting with its value: given, else the default (null where there is none). */
export type ResolvedLlmOptions = Required<Omit<LlmOptions, 'policyUpdateCommand' | 'extraBody' | 'contextTokens'>> & {
  policyUpdateCommand: string | null;
  extraBody: Record<string, unknown> | null;
  contextTokens: number | null;
};

/** The settings with the defaults filled in (a setting given as undefined takes its default). */
export function resolveLlmOptions(options: LlmOptions): ResolvedLlmOptions {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  return { ...LLM_DEFAULTS, policyUpdateCommand: null, extraBody: null, ...given } as ResolvedLlmOptions;
}

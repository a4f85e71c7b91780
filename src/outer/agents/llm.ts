/**
 * A large language model as the trainer agent, behind any OpenAI-compatible endpoint (vLLM,
 * SGLang, llama.cpp's server, Ollama) through the official `openai` client. Each proposal is
 * one chat completion asked for structured output with the job spec's JSON Schema and checked
 * with the zod schema and the brief anyway; an invalid reply gets one repair turn with the
 * exact error. Timeouts, connection errors, 429 and 5xx answers are retried here (the client's
 * own retries are off, so every attempt is recorded) with exponential backoff, jitter and
 * `Retry-After`; after the limit the proposal is recorded as rejected and the run goes on.
 *
 * The LLM learns outside this process: between iterations `policyUpdateCommand` (a TRL or
 * verl script on a GPU node) trains a LoRA adapter on the iteration's exported batch, and the
 * agent loads it into the server under a new, never-reused name (vLLM's
 * `POST /v1/load_lora_adapter`) and samples the next iteration from it.
 */
import OpenAI from 'openai';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { TaskBrief } from '../../spec/brief.js';
import { grammarSchema } from '../../spec/grammar-schema.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { validateSpec } from '../../inner/validate.js';
import { checkAnswer, readAnswer } from '../answer.js';
import type { JsonObject } from '../../spec/patch.js';
import { jobEnvironment } from '../../inner/job-env.js';
import { MAX_ISSUE_CHARS, MAX_REPLY_CHARS, SPEC_BOUNDS, checkBounds, describeViolation, oneLine } from '../../spec/bounds.js';
import type { Rng } from '../../util/rng.js';
import { sampleFromTrace, trlRow } from '../export.js';
import { groupAdvantages } from '../reward.js';
import { buildPrompt, type ChatMessage, type PromptHistoryItem } from './prompt.js';
import type { Agent, IterationContext, Proposal, ProposalContext, RewardGroup, UpdateStats } from './types.js';

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
export type PromptForm = (typeof PROMPT_FORMS)[number];

/**
 * How a request asks for structured output, most exact first. A server that refuses one (see
 * `refusesFormat`; e.g. llama-cpp-python's server, which knows only `json_object`) gets the next one,
 * and the agent keeps the first one accepted: `json_schema` (OpenAI's form: vLLM, SGLang,
 * llama.cpp's llama-server, Ollama), `json_object+schema` (JSON mode with a `schema`, the form
 * of llama-cpp-python and llama-server), `json_object` (JSON mode; the reply is validated and
 * repaired as always), `none`.
 */
export const RESPONSE_FORMATS = ['json_schema', 'json_object+schema', 'json_object', 'none'] as const;
export type ResponseFormatMode = (typeof RESPONSE_FORMATS)[number];

/** The `response_format` of a request in `mode` for `brief` (undefined: none). */
export function responseFormat(mode: ResponseFormatMode, brief: TaskBrief): Record<string, unknown> | undefined {
  if (mode === 'json_schema') return { type: 'json_schema', json_schema: { name: 'job_spec', schema: grammarSchema(brief) } };
  if (mode === 'json_object+schema') return { type: 'json_object', schema: grammarSchema(brief) };
  if (mode === 'json_object') return { type: 'json_object' };
  return undefined;
}

/**
 * Whether a failed request reads as the server refusing its `response_format`: a 400, 422 or 501
 * that is not about the context, or a 5xx whose message names `response_format` or `json_schema`
 * (llama-cpp-python's server answers an unknown `response_format.type` with HTTP 500 and pydantic's
 * `literal_error`).
 */
export function refusesFormat(status: number | undefined, message: string): boolean {
  if (status === undefined || contextOverflow(message).overflow) return false;
  if (status === 400 || status === 422 || status === 501) return true;
  return status >= 500 && /response_format|json_schema/i.test(message);
}

/**
 * Whether an error says the prompt (plus the completion's room) is over the model's context, and
 * the context when it names one: OpenAI's and vLLM's "maximum context length is N tokens",
 * llama-cpp-python's (same words), llama-server's "exceeds the available context size".
 */
export function contextOverflow(message: string): { overflow: boolean; contextTokens: number | null } {
  const m = /maximum context length is (\d+)|context window of (\d+)|n_ctx\D{0,4}(\d+)/i.exec(message);
  const overflow = !!m || /context_length_exceeded|exceed(?:s|ed)? the available context|exceed_context_size|prompt is too long|too many tokens/i.test(message);
  const n = m ? Number(m[1] ?? m[2] ?? m[3]) : NaN;
  return { overflow, contextTokens: Number.isFinite(n) && n > 0 ? n : null };
}

const MAX_BACKOFF_MS = 60_000;
const MAX_RETRY_AFTER_MS = 300_000;

/** One HTTP attempt of a request, as recorded in the trace. */
export interface AttemptRecord {
  attempt: number;
  ok: boolean;
  status?: number;
  error?: string;
  /** The wait before the next attempt, when there was one. */
  waitMs?: number;
  retryAfterMs?: number;
}

/** One sampled token and its log-probability. */
export interface TokenLogprob {
  token: string;
  logprob: number;
}

/** One turn of a proposal: the initial request or the repair turn. */
export interface TurnRecord {
  /** How the request asked for structured output (absent: no request was answered). */
  responseFormat?: ResponseFormatMode;
  /** Token counts as the server reported them (`usage`), when it did. */
  usage?: { promptTokens: number | null; completionTokens: number | null } | null;
  /** Wall time of the answered request, in milliseconds. */
  wallMs?: number;
  turn: 'initial' | 'repair';
  requestId: string | null;
  choiceIndex: number;
  attempts: AttemptRecord[];
  completion: string | null;
  logprobs: TokenLogprob[] | null;
  finishReason: string | null;
  /** Why the completion was rejected (null when it was valid). */
  error: string | null;
}

/** The trace of one LLM proposal: everything needed to train the LLM on its reward. */
export interface LlmTrace {
  kind: 'llm';
  /** The base model and the adapter sampled from (null: the base model). */
  model: string;
  adapter: string | null;
  /** The conversation the final completion was sampled from (prompt, and the repair turn if any). */
  messages: ChatMessage[];
  /** The final completion and its token log-probabilities (null when none came back). */
  completion: string | null;
  logprobs: TokenLogprob[] | null;
  turns: TurnRecord[];
  repaired: boolean;
  /** Why the proposal was rejected (null when its spec passed validation). */
  error: string | null;
  sampling: { temperature: number; topP: number; maxTokens: number; n: number };
  /**
   * The prompt form used and its size in the model's tokens against the model's context, as
   * measured before the request (null: not measured) and by which endpoint.
   */
  prompt?: { form: 'full' | 'compact'; tokens: number | null; contextTokens: number | null; measuredBy: string | null; why: string };
}

/** The tokenizer endpoints `countTokens` knows. */
type TokenizerEndpoint = 'vllm' | 'llama-server' | 'llama-cpp-python';
const TOKENIZER_LABELS: Record<TokenizerEndpoint, string> = {
  vllm: 'POST /tokenize (vLLM, chat template applied)',
  'llama-server': 'POST /apply-template + /tokenize (llama-server)',
  'llama-cpp-python': 'POST /extras/tokenize/count (llama-cpp-python, ChatML framing)',
};

/** A completion as it came back, with the attempts it took. */
interface Sample {
  requestId: string | null;
  choiceIndex: number;
  content: string | null;
  logprobs: TokenLogprob[] | null;
  finishReason: string | null;
  attempts: AttemptRecord[];
  responseFormat: ResponseFormatMode;
  usage: { promptTokens: number | null; completionTokens: number | null } | null;
  wallMs: number;
}

/** Reads `Retry-After` / `retry-after-ms` from an error's headers, in milliseconds. */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const ra = headers.get('retry-after');
  if (ra === null) return undefined;
  if (Number.isFinite(Number(ra)) && Number(ra) >= 0) return Number(ra) * 1000;
  const at = Date.parse(ra);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

/** Whether an error from the client is worth another attempt, with its status and message. */
export function classifyError(err: unknown, timeoutSeconds?: number): { retryable: boolean; status?: number; message: string; retryAfterMs?: number } {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { retryable: true, message: `the request timed out${timeoutSeconds !== undefined ? ` after ${timeoutSeconds} s` : ''}` };
  if (err instanceof OpenAI.APIConnectionError) return { retryable: true, message: `connection error: ${err.message}${err.cause ? ` (${(err.cause as Error).message})` : ''}` };
  if (err instanceof OpenAI.APIError) {
    const status = err.status;
    const retryable = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    return { retryable, status, message: `HTTP ${status ?? '?'}: ${err.message}`, retryAfterMs: retryAfterMs(err.headers) };
  }
  return { retryable: false, message: (err as Error)?.message ?? String(err) };
}

/** Exponential backoff with jitter: base · 2^(attempt−1), capped, times a factor in [0.5, 1). */
export function backoffDelay(attempt: number, baseMs: number, rng: Rng): number {
  const cap = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** (attempt - 1));
  return Math.round(cap * (0.5 + 0.5 * rng.next()));
}

/**
 * The JSON part of a reply: without a leading `<think>…</think>` block (reasoning models on a
 * server without a reasoning parser) and without one surrounding Markdown code fence.
 */
function unfence(text: string): string {
  const body = text.replace(/^\s*<think>[\s\S]*?<\/think>/, '').trim();
  const m = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(body);
  return m ? m[1] : body;
}

/** The public baseline spec of a task (what a patch reply applies to); null for a task without one. */
function publicBaseline(task: string): unknown {
  try {
    return getPublicTask(task).baseline;
  } catch {
    return null;
  }
}

/**
 * Checks one reply: JSON, an object, and a spec that fits the schema and the brief (ranges,
 * catalog, budget cap, the reward-expression compiler). The reply may be a full spec or a JSON
 * merge patch over the task's baseline spec (outer/answer.ts); `patch` is the patch as written
 * (null for a full spec) and `spec` the spec it stands for, returned either way.
 */
export function checkReply(
  content: string | null,
  brief: TaskBrief,
  baseline: unknown = publicBaseline(brief.id),
): { ok: true; spec: unknown; patch: JsonObject | null } | { ok: false; spec: unknown; patch: JsonObject | null; error: string } {
  if (typeof content !== 'string' || !content.trim()) return { ok: false, spec: null, patch: null, error: 'the reply is empty; expected one JSON object, the job spec' };
  // Limits first: nothing parses, formats or stores a reply over them.
  if (content.length > MAX_REPLY_CHARS) {
    return { ok: false, spec: null, patch: null, error: `the reply is ${content.length} characters long; the limit is ${MAX_REPLY_CHARS} (one JSON object, the job spec)` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(unfence(content));
  } catch (err) {
    return { ok: false, spec: oneLine(content, 200), patch: null, error: oneLine(`the reply is not JSON (${(err as Error).message}); expected one JSON object, the job spec`, MAX_ISSUE_CHARS) };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, spec: null, patch: null, error: `the reply is JSON but not an object (got ${Array.isArray(parsed) ? 'an array' : typeof parsed}); expected the job spec object` };
  }
  const read = readAnswer(parsed, baseline);
  if (!read.ok) return { ok: false, spec: null, patch: null, error: read.error };
  const over = checkBounds(read.spec, SPEC_BOUNDS);
  if (over) return { ok: false, spec: null, patch: null, error: describeViolation('the reply is over the size limits of a job spec:', over) };
  const checked = checkAnswer(read, brief, baseline);
  return checked.ok ? { ok: true, spec: read.spec, patch: read.patch } : { ok: false, spec: read.spec, patch: read.patch, error: checked.error };
}

/** A completion as stored in the trace and sent back in the repair turn: clipped at the reply limit. */
function clipCompletion(content: string | null): string | null {
  if (typeof content !== 'string' || content.length <= MAX_REPLY_CHARS) return content;
  return `${content.slice(0, MAX_REPLY_CHARS)}…[${content.length - MAX_REPLY_CHARS} more characters not kept]`;
}

/** The user message of the repair turn: the exact error and what to send instead. */
export function repairMessage(error: string, brief: TaskBrief): string {
  return `Your reply was rejected: ${error}\nReply with the corrected, complete job spec for task "${brief.id}" as one JSON object and nothing else.`;
}

/** The server's root URL (the base URL without its `/v1` suffix), for vLLM's admin endpoints. */
export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** A record of one policy update between iterations. */
export interface PolicyUpdateRecord {
  iteration: number;
  batch: string;
  rows: number;
  exitCode: number | null;
  /** The adapter loaded after this update (null: the model stayed as it was). */
  adapter: string | null;
  adapterDir: string;
  error: string | null;
  log: string;
}

/** The LLM agent's checkpoint: which adapter it samples from and its policy updates. */
interface LlmState {
  adapter: string | null;
  version: number;
  updates: PolicyUpdateRecord[];
}

/** The TRL rows of one iteration's scored completions (`rrl export grpo --format trl` writes the same rows from the store). */
export function batchRows(groups: RewardGroup[], ctx: IterationContext): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const g of groups) {
    const advantages = groupAdvantages(g.items.map((i) => i.reward));
    g.items.forEach((item, slot) => {
      const t = item.trace as LlmTrace | null;
      if (!t || t.kind !== 'llm' || t.completion === null) return;
      const advantage = item.advantage ?? advantages[slot];
      const job = { jobId: item.jobId ?? -1, runId: ctx.runId, iteration: ctx.iteration, slot, task: g.brief.id, groupId: `it${ctx.iteration}/${g.brief.id}` };
      rows.push(trlRow(sampleFromTrace(t, { ...job, reward: item.reward, advantage, status: item.status ?? 'unknown', error: item.error ?? null })));
    });
  }
  return rows;
}

/** The LLM trainer agent behind the `Agent` interface. */
export class LlmAgent implements Agent {
  readonly name = 'llm';
  private readonly client: OpenAI;
  private readonly o: Required<Omit<LlmOptions, 'policyUpdateCommand' | 'extraBody' | 'contextTokens'>> & {
    policyUpdateCommand: string | null;
    extraBody: Record<string, unknown> | null;
    contextTokens: number | null;
  };
  /** How requests ask for structured output now (lowered when the server refuses a form). */
  private format: ResponseFormatMode;
  /** The model's context in tokens: given, asked of the server, or learnt from a refusal (undefined: not asked yet). */
  private context: number | null | undefined;
  /** The tokenizer endpoint that answered (null: none does; undefined: not tried yet). */
  private tokenizer: TokenizerEndpoint | null | undefined;
  /** Tasks whose full prompt does not fit (auto form), with why. */
  private readonly compactTasks = new Map<string, string>();
  private adapter: string | null = null;
  private version = 0;
  private updates: PolicyUpdateRecord[] = [];
  /** Whether the restored adapter was checked to be loaded in the server. */
  private adapterChecked = true;
  /** Extra completions of an `n` > 1 request, kept for the group's next proposals. */
  private pool = new Map<string, Sample[]>();

  /** Creates the client; the API key is read from `apiKeyEnv` (servers without auth accept any). */
  constructor(options: LlmOptions, private readonly log: (message: string) => void = () => {}) {
    this.o = { ...LLM_DEFAULTS, policyUpdateCommand: null, extraBody: null, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as LlmAgent['o'];
    this.client = new OpenAI({
      baseURL: this.o.baseUrl,
      apiKey: process.env[this.o.apiKeyEnv] || 'EMPTY',
      maxRetries: 0,
      timeout: this.o.timeoutSeconds * 1000,
    });
    this.format = this.o.structuredOutput ? 'json_schema' : 'none';
    this.context = this.o.contextTokens ?? undefined;
  }

  /** How requests ask for structured output now (see `RESPONSE_FORMATS`). */
  responseFormatMode(): ResponseFormatMode {
    return this.format;
  }

  /** The model name requests go to: the current adapter, or the base model. */
  servedModel(): string {
    return this.adapter ?? this.o.model;
  }

  /**
   * Asks the server for `n` completions of `messages`, retrying transient failures. A request
   * whose `response_format` the server refuses (`refusesFormat`) is sent
   * again at once with the next form of `RESPONSE_FORMATS`; the first form accepted is kept.
   */
  private async request(messages: ChatMessage[], n: number, rng: Rng, brief: TaskBrief): Promise<{ ok: true; samples: Sample[] } | { ok: false; error: string; attempts: AttemptRecord[] }> {
    const attempts: AttemptRecord[] = [];
    const maxAttempts = this.o.retries + 1;
    let mode = this.format;
    let failures = 0;
    for (let attempt = 1; ; attempt++) {
      const t0 = performance.now();
      try {
        const rf = responseFormat(mode, brief);
        const body = {
          ...(this.o.extraBody ?? {}),
          model: this.servedModel(),
          messages,
          temperature: this.o.temperature,
          top_p: this.o.topP,
          max_tokens: this.o.maxTokens,
          n,
          ...(this.o.logprobs ? { logprobs: true } : {}),
          ...(rf ? { response_format: rf } : {}),
        } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
        const res = await this.client.chat.completions.create(body);
        if (!Array.isArray(res.choices) || res.choices.length === 0) throw new Error('the server answered without choices');
        const wallMs = Math.round(performance.now() - t0);
        attempts.push({ attempt, ok: true, status: 200 });
        if (mode !== this.format) {
          this.log(`the server refused response_format ${this.format}; using ${mode} from now on (the reply is validated and repaired as always)`);
          this.format = mode;
        }
        const usage = res.usage ? { promptTokens: res.usage.prompt_tokens ?? null, completionTokens: res.usage.completion_tokens ?? null } : null;
        return {
          ok: true,
          samples: res.choices.map((c, i) => ({
            requestId: typeof res.id === 'string' ? oneLine(res.id, 200) : null,
            choiceIndex: c.index ?? i,
            content: typeof c.message?.content === 'string' ? c.message.content : null,
            logprobs: c.logprobs?.content ? c.logprobs.content.map((t) => ({ token: t.token, logprob: t.logprob })) : null,
            finishReason: c.finish_reason ?? null,
            attempts,
            responseFormat: mode,
            usage,
            wallMs,
          })),
        };
      } catch (err) {
        const info = err instanceof Error && err.message === 'the server answered without choices' ? { retryable: true, message: err.message } : classifyError(err, this.o.timeoutSeconds);
        info.message = oneLine(info.message, MAX_ISSUE_CHARS); // a server's error body is not ours to store whole
        const status = 'status' in info ? info.status : undefined;
        const rec: AttemptRecord = { attempt, ok: false, error: info.message, ...(status !== undefined ? { status } : {}) };
        attempts.push(rec);
        const next = RESPONSE_FORMATS[RESPONSE_FORMATS.indexOf(mode) + 1];
        if (mode !== 'none' && next && refusesFormat(status, info.message)) {
          rec.error = `${info.message} (response_format ${mode} refused? trying ${next})`;
          mode = next;
          continue;
        }
        failures++;
        if (!info.retryable || failures >= maxAttempts) {
          const why = info.retryable ? `gave up after ${attempt} attempt(s)` : 'not retried';
          return { ok: false, error: `the LLM request failed (${why}): ${info.message}`, attempts };
        }
        const ra = 'retryAfterMs' in info ? info.retryAfterMs : undefined;
        const wait = ra !== undefined ? Math.min(ra, MAX_RETRY_AFTER_MS) : backoffDelay(failures, this.o.backoffMs, rng);
        rec.waitMs = wait;
        if (ra !== undefined) rec.retryAfterMs = ra;
        this.log(`LLM request attempt ${attempt} failed (${info.message}); retrying in ${wait} ms`);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** One completion of the initial prompt, from the pool of an earlier `n` > 1 request when possible. */
  private async sampleInitial(key: string, messages: ChatMessage[], rng: Rng, brief: TaskBrief): Promise<{ ok: true; sample: Sample } | { ok: false; error: string; attempts: AttemptRecord[] }> {
    const pooled = this.pool.get(key);
    if (pooled?.length) return { ok: true, sample: pooled.shift()! };
    const r = await this.request(messages, this.o.n, rng, brief);
    if (!r.ok) return r;
    this.pool.clear(); // older leftovers belong to prompts that will not come again
    this.pool.set(key, r.samples.slice(1));
    return { ok: true, sample: r.samples[0] };
  }

  /**
   * After a resume: makes sure the restored adapter is loaded in the server (a restarted
   * server has lost it) by loading it again from its directory under its own name; when that
   * fails the agent goes back to the base model and says so.
   */
  private async ensureAdapter(): Promise<void> {
    if (this.adapterChecked || this.adapter === null) return;
    this.adapterChecked = true;
    const models = await this.listModels();
    if (models.has(this.adapter)) return;
    const dir = this.updates.find((u) => u.adapter === this.adapter)?.adapterDir;
    const loaded = dir ? await this.loadAdapter(this.adapter, dir) : { ok: false as const, error: 'its directory is not recorded' };
    if (loaded.ok) {
      this.log(`adapter ${this.adapter} was not loaded in the server; loaded it again from ${dir}`);
      return;
    }
    this.log(`adapter ${this.adapter} is not loaded in the server and could not be loaded again (${loaded.error}); sampling from the base model ${this.o.model}`);
    this.adapter = null;
  }

  /** Writes one job spec for `brief`: prompt, completion, checks, at most one repair turn. */
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    await this.ensureAdapter();
    const history: PromptHistoryItem[] = ctx.history.map((h) => ({ spec: h.spec, reward: h.reward, status: h.status, error: h.error }));
    for (;;) {
      const chosen = await this.choosePrompt(brief, history);
      const messages = chosen.messages;
      const key = `${ctx.iteration}:${brief.id}:${createHash('sha256').update(JSON.stringify(messages)).digest('hex')}`;
      const trace: LlmTrace = {
        kind: 'llm',
        model: this.o.model,
        adapter: this.adapter,
        messages,
        completion: null,
        logprobs: null,
        turns: [],
        repaired: false,
        error: null,
        sampling: { temperature: this.o.temperature, topP: this.o.topP, maxTokens: this.o.maxTokens, n: this.o.n },
        prompt: chosen.info,
      };
      if (chosen.error) {
        trace.error = chosen.error;
        return { spec: null, trace, rejected: { kind: 'llm-error', error: chosen.error } };
      }
      const first = await this.sampleInitial(key, messages, ctx.rng, brief);
      if (!first.ok) {
        // The server says the full prompt is too long: the compact one, from now on for this task.
        const over = contextOverflow(first.error);
        if (over.overflow && chosen.info.form === 'full' && this.o.promptForm === 'auto') {
          if (over.contextTokens !== null) this.context = over.contextTokens;
          const why = `the server refused the full prompt as too long (${oneLine(first.error, 300)})`;
          this.compactTasks.set(brief.id, why);
          this.log(`${brief.id}: ${why}; using the compact prompt`);
          continue;
        }
        trace.turns.push({ turn: 'initial', requestId: null, choiceIndex: 0, attempts: first.attempts, completion: null, logprobs: null, finishReason: null, error: first.error });
        trace.error = first.error;
        return { spec: null, trace, rejected: { kind: 'llm-error', error: first.error } };
      }
      let sample = first.sample;
      let check = checkReply(sample.content, brief);
      trace.turns.push(this.turn('initial', sample, check.ok ? null : check.error));
      trace.completion = clipCompletion(sample.content);
      trace.logprobs = sample.logprobs;
      if (!check.ok) {
        const repairMessages: ChatMessage[] = [...messages, { role: 'assistant', content: clipCompletion(sample.content) ?? '' }, { role: 'user', content: repairMessage(check.error, brief) }];
        const second = await this.request(repairMessages, 1, ctx.rng, brief);
        trace.repaired = true;
        if (!second.ok) {
          trace.turns.push({ turn: 'repair', requestId: null, choiceIndex: 0, attempts: second.attempts, completion: null, logprobs: null, finishReason: null, error: second.error });
          trace.error = `${check.error} (the repair turn failed: ${second.error})`;
          return { spec: check.spec, patch: check.patch, trace, rejected: { kind: 'invalid', error: trace.error } };
        }
        sample = second.samples[0];
        check = checkReply(sample.content, brief);
        trace.turns.push(this.turn('repair', sample, check.ok ? null : check.error));
        trace.messages = repairMessages;
        trace.completion = clipCompletion(sample.content);
        trace.logprobs = sample.logprobs;
        if (!check.ok) {
          trace.error = check.error;
          return { spec: check.spec, patch: check.patch, trace, rejected: { kind: 'invalid', error: `after a repair turn: ${check.error}` } };
        }
      }
      return { spec: check.spec, patch: check.patch, trace };
    }
  }

  /**
   * The compact prompt's example: the best-rewarded earlier spec on the task that is still valid
   * (so the compact form keeps learning in context), else the task's public baseline spec.
   */
  private compactExample(brief: TaskBrief, history: PromptHistoryItem[]): unknown {
    const best = history
      .filter((h) => h.reward !== null && h.spec !== null && typeof h.spec === 'object' && validateSpec(h.spec, brief).ok)
      .sort((a, b) => (b.reward as number) - (a.reward as number))[0];
    if (best) return best.spec;
    return publicBaseline(brief.id);
  }

  /**
   * The prompt for one proposal and why that form: see `LlmOptions.promptForm`. With the context
   * known, the chosen prompt is measured in the model's tokens; one that leaves less than
   * `maxTokens` for the reply is an error naming the sizes.
   */
  private async choosePrompt(brief: TaskBrief, history: PromptHistoryItem[]): Promise<{ messages: ChatMessage[]; info: NonNullable<LlmTrace['prompt']>; error?: string }> {
    const full = (): ChatMessage[] => buildPrompt(brief, { history, historyLimit: this.o.historyLimit });
    const example = this.compactExample(brief, history);
    const compact = (): ChatMessage[] => buildPrompt(brief, { compact: true, example });
    const maxTokens = this.o.maxTokens;
    const context = await this.contextSize();
    const fit = async (form: 'full' | 'compact', messages: ChatMessage[], why: string): Promise<{ messages: ChatMessage[]; info: NonNullable<LlmTrace['prompt']>; error?: string }> => {
      const m = context !== null ? await this.countTokens(messages) : null;
      const info = { form, tokens: m?.tokens ?? null, contextTokens: context, measuredBy: m?.by ?? null, why };
      if (m && context !== null && m.tokens + maxTokens > context) {
        return { messages, info, error: `the ${form} prompt is ${m.tokens} tokens; with --max-tokens ${maxTokens} it exceeds the model's context of ${context} tokens: lower --max-tokens or serve the model with a larger context` };
      }
      return { messages, info };
    };
    if (this.o.promptForm === 'full' || (this.o.promptForm === 'auto' && example === null)) return fit('full', full(), this.o.promptForm === 'full' ? '--llm-prompt full' : 'no example spec for the compact form');
    if (this.o.promptForm === 'compact') return fit('compact', compact(), '--llm-prompt compact');
    const known = this.compactTasks.get(brief.id);
    if (known) return fit('compact', compact(), known);
    if (context === null) return { messages: full(), info: { form: 'full', tokens: null, contextTokens: null, measuredBy: null, why: 'the model\'s context is unknown (no --llm-context, and the server does not say): the full prompt until the server refuses it as too long' } };
    const messages = full();
    const m = await this.countTokens(messages);
    if (m === null) return { messages, info: { form: 'full', tokens: null, contextTokens: context, measuredBy: null, why: 'the server offers no tokenizer endpoint: the full prompt until the server refuses it as too long' } };
    if (m.tokens + maxTokens <= context) return { messages, info: { form: 'full', tokens: m.tokens, contextTokens: context, measuredBy: m.by, why: `${m.tokens} prompt tokens + ${maxTokens} for the reply fit the context of ${context}` } };
    const why = `the full prompt is ${m.tokens} tokens (${m.by}); with ${maxTokens} for the reply it exceeds the context of ${context}`;
    this.compactTasks.set(brief.id, why);
    this.log(`${brief.id}: ${why}; using the compact prompt`);
    return fit('compact', compact(), why);
  }

  /** The model's context in tokens: `contextTokens`, else what the server says (vLLM's `/v1/models`, llama-server's `/props`), else null. */
  private async contextSize(): Promise<number | null> {
    if (this.context !== undefined) return this.context;
    const root = serverRoot(this.o.baseUrl);
    const models = await this.getJson(`${root}/v1/models`);
    const listed = Array.isArray((models as { data?: unknown })?.data) ? ((models as { data: { id?: string; max_model_len?: unknown }[] }).data) : [];
    const mine = listed.find((m) => m.id === this.servedModel()) ?? listed.find((m) => m.id === this.o.model);
    let n = Number(mine?.max_model_len);
    if (!(n > 0)) {
      const props = (await this.getJson(`${root}/props`)) as { default_generation_settings?: { n_ctx?: unknown }; n_ctx?: unknown } | null;
      n = Number(props?.default_generation_settings?.n_ctx ?? props?.n_ctx);
    }
    this.context = Number.isFinite(n) && n > 0 ? n : null;
    return this.context;
  }

  /**
   * The prompt's length in the model's own tokens, from the first endpoint that answers: vLLM's
   * `POST /tokenize` with the messages (chat template applied), llama-server's
   * `POST /apply-template` then `POST /tokenize`, llama-cpp-python's `POST /extras/tokenize/count`
   * on the messages in ChatML framing (the chat template of ChatML models such as SmolLM2 and Qwen).
   */
  private async countTokens(messages: ChatMessage[]): Promise<{ tokens: number; by: string } | null> {
    const root = serverRoot(this.o.baseUrl);
    const order: TokenizerEndpoint[] = this.tokenizer ? [this.tokenizer] : this.tokenizer === null ? [] : ['vllm', 'llama-server', 'llama-cpp-python'];
    for (const t of order) {
      let tokens: number | null = null;
      if (t === 'vllm') {
        const r = (await this.postJson(`${root}/tokenize`, { model: this.servedModel(), messages })) as { count?: unknown } | null;
        tokens = typeof r?.count === 'number' ? r.count : null;
      } else if (t === 'llama-server') {
        const tpl = (await this.postJson(`${root}/apply-template`, { messages })) as { prompt?: unknown } | null;
        if (typeof tpl?.prompt === 'string') {
          const r = (await this.postJson(`${root}/tokenize`, { content: tpl.prompt, add_special: true, parse_special: true })) as { tokens?: unknown } | null;
          tokens = Array.isArray(r?.tokens) ? r.tokens.length : null;
        }
      } else {
        const text = messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
        const r = (await this.postJson(`${root}/extras/tokenize/count`, { input: text, model: this.servedModel() })) as { count?: unknown } | null;
        tokens = typeof r?.count === 'number' ? r.count : null;
      }
      if (tokens !== null) {
        this.tokenizer = t;
        return { tokens, by: TOKENIZER_LABELS[t] };
      }
    }
    if (this.tokenizer === undefined) this.tokenizer = null;
    return null;
  }

  /** GET a JSON document from the server (null on any failure). */
  private async getJson(url: string): Promise<unknown> {
    return this.fetchJson(url, { method: 'GET' });
  }

  /** POST a JSON body to the server; the parsed answer, or null on any failure. */
  private async postJson(url: string, body: unknown): Promise<unknown> {
    return this.fetchJson(url, { method: 'POST', body: JSON.stringify(body) });
  }

  private async fetchJson(url: string, init: { method: string; body?: string }): Promise<unknown> {
    try {
      const key = process.env[this.o.apiKeyEnv];
      const res = await fetch(url, {
        ...init,
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        signal: AbortSignal.timeout(Math.min(30, this.o.timeoutSeconds) * 1000),
      });
      if (!res.ok) return null;
      return await res.json();
    } catch {
      return null;
    }
  }

  private turn(turn: 'initial' | 'repair', s: Sample, error: string | null): TurnRecord {
    return {
      turn, requestId: s.requestId, choiceIndex: s.choiceIndex, attempts: s.attempts, completion: clipCompletion(s.content), logprobs: s.logprobs, finishReason: s.finishReason, error,
      responseFormat: s.responseFormat, usage: s.usage, wallMs: s.wallMs,
    };
  }

  /**
   * Learns from one iteration's scored completions: writes them as a TRL batch (JSON Lines, one
   * row per completion: prompt, completion, reward, advantage, group and job), runs the
   * policy-update command on it and, when the command wrote a LoRA adapter
   * (`adapter_config.json`), loads it into the server under a new name and samples from it from
   * now on. Without a command (in-context learning only) nothing changes. Failures are recorded
   * and the agent keeps its current model; an iteration is updated at most once.
   */
  async update(groups: RewardGroup[], ctx?: IterationContext): Promise<UpdateStats> {
    const command = this.o.policyUpdateCommand;
    if (!command || !ctx || ctx.last || this.updates.some((u) => u.iteration === ctx.iteration)) return {};
    const policyDir = join(resolve(ctx.runDir), 'policy');
    mkdirSync(policyDir, { recursive: true });
    const batch = join(policyDir, `batch-it${ctx.iteration}.jsonl`);
    const rows = batchRows(groups, ctx);
    writeFileSync(batch, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
    await this.policyUpdate(command, ctx, batch, rows.length);
    const last = this.updates[this.updates.length - 1];
    return { rows: rows.length, exitCode: last.exitCode ?? -1, adapterLoaded: last.adapter ? 1 : 0 };
  }

  /** Runs the policy-update command on `batch` and loads the adapter it writes (see `update`). */
  private async policyUpdate(command: string, ctx: IterationContext, batch: string, rows: number): Promise<void> {
    const policyDir = dirname(batch);
    const existing = await this.listModels();
    let version = this.version + 1;
    const safeRun = ctx.runId.replace(/[^A-Za-z0-9_-]/g, '-');
    while (existing.has(`rrl-${safeRun}-v${version}`)) version++;
    const name = `rrl-${safeRun}-v${version}`;
    const adapterDir = join(policyDir, 'adapters', name);
    const logPath = join(policyDir, `update-it${ctx.iteration}.log`);
    const record: PolicyUpdateRecord = { iteration: ctx.iteration, batch, rows, exitCode: null, adapter: null, adapterDir, error: null, log: logPath };
    this.updates.push(record);
    this.log(`policy update after iteration ${ctx.iteration + 1}: ${command}`);
    const fd = openSync(logPath, 'a');
    try {
      record.exitCode = await new Promise<number | null>((done) => {
        const child = spawn(command, {
          shell: true,
          stdio: ['ignore', fd, fd],
          env: {
            ...jobEnvironment(), // never the evaluation secret
            RRL_BATCH: batch,
            RRL_BATCH_FORMAT: 'trl',
            RRL_RUN_DIR: resolve(ctx.runDir),
            RRL_RUN_ID: ctx.runId,
            RRL_ITERATION: String(ctx.iteration),
            RRL_ADAPTER_DIR: adapterDir,
            RRL_ADAPTER_NAME: name,
            RRL_BASE_MODEL: this.o.model,
            RRL_CURRENT_MODEL: this.servedModel(),
            RRL_BASE_URL: this.o.baseUrl,
          },
        });
        child.once('error', (err) => {
          record.error = `the policy-update command could not start: ${err.message}`;
          done(null);
        });
        child.once('exit', (code) => done(code));
      });
    } finally {
      closeSync(fd);
    }
    if (record.exitCode !== 0) {
      record.error ??= `the policy-update command exited with code ${record.exitCode} (log: ${logPath}); keeping ${this.servedModel()}`;
      this.log(record.error);
      return;
    }
    if (!existsSync(join(adapterDir, 'adapter_config.json'))) {
      record.error = `the policy-update command wrote no adapter (no adapter_config.json in ${adapterDir}); keeping ${this.servedModel()}`;
      this.log(record.error);
      return;
    }
    const loaded = await this.loadAdapter(name, adapterDir);
    if (!loaded.ok) {
      record.error = `loading adapter ${name} failed: ${loaded.error}; keeping ${this.servedModel()}`;
      this.log(record.error);
      return;
    }
    this.adapter = name;
    this.version = version;
    record.adapter = name;
    this.log(`loaded adapter ${name}; the next iteration samples from it`);
  }

  /** The model names the server lists (`GET /v1/models`); empty when it cannot be asked. */
  private async listModels(): Promise<Set<string>> {
    try {
      const out = new Set<string>();
      for await (const m of this.client.models.list()) out.add(m.id);
      return out;
    } catch {
      return new Set();
    }
  }

  /** `POST /v1/load_lora_adapter` (vLLM's runtime LoRA loading). */
  private async loadAdapter(name: string, path: string): Promise<{ ok: true } | { ok: false; error: string }> {
    const url = `${serverRoot(this.o.baseUrl)}/v1/load_lora_adapter`;
    try {
      const key = process.env[this.o.apiKeyEnv];
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ lora_name: name, lora_path: path }),
        signal: AbortSignal.timeout(this.o.timeoutSeconds * 1000),
      });
      const text = await res.text();
      return res.ok ? { ok: true } : { ok: false, error: `HTTP ${res.status} from ${url}: ${text.slice(0, 500)}` };
    } catch (err) {
      return { ok: false, error: `${url}: ${(err as Error).message}` };
    }
  }

  /** The adapter sampled from, the version counter and the policy updates so far. */
  async state(): Promise<unknown> {
    return { adapter: this.adapter, version: this.version, updates: this.updates } satisfies LlmState;
  }

  /** Restores `state()`; the adapter is assumed still loaded in the server. */
  async load(state: unknown): Promise<void> {
    const s = (state ?? {}) as Partial<LlmState>;
    this.adapter = s.adapter ?? null;
    this.version = s.version ?? 0;
    this.updates = s.updates ?? [];
    this.adapterChecked = this.adapter === null;
  }
}

/**
 * Chat completions from the server: one request, retried on transient failures (retry.ts), with
 * `response_format` stepped down when the server refuses it (response-format.ts); and the pool
 * of an `n` > 1 request's extra completions, which serve the group's next proposals.
 */
import type OpenAI from 'openai';
import type { TaskBrief } from '../../../spec/brief.js';
import { MAX_ISSUE_CHARS, oneLine } from '../../../spec/bounds.js';
import type { Rng } from '../../../util/rng.js';
import type { ChatMessage } from '../types.js';
import type { ResolvedLlmOptions } from './options.js';
import { RESPONSE_FORMATS, type ResponseFormatMode, refusesFormat, responseFormat } from './response-format.js';
import { MAX_RETRY_AFTER_MS, backoffDelay, classifyError } from './retry.js';
import type { AttemptRecord, TokenLogprob } from './trace.js';

/** A completion as it came back, with the attempts it took. */
export interface Sample {
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

/** A request that failed for good: why, and every attempt it took. */
export interface Failed {
  ok: false;
  error: string;
  attempts: AttemptRecord[];
}

/** Asks the server for completions; keeps the structured-output form it accepts and the extra completions. */
export class Completions {
  /** How requests ask for structured output now (lowered when the server refuses a form). */
  private format: ResponseFormatMode;
  /** Extra completions of an `n` > 1 request, kept for the group's next proposals. */
  private pool = new Map<string, Sample[]>();

  /** Completions through `client` under the agent's settings; `servedModel` names the model requests go to now. */
  constructor(
    private readonly client: OpenAI,
    private readonly o: ResolvedLlmOptions,
    private readonly servedModel: () => string,
    private readonly log: (message: string) => void,
  ) {
    this.format = o.structuredOutput ? 'json_schema' : 'none';
  }

  /** How requests ask for structured output now (see `RESPONSE_FORMATS`). */
  formatMode(): ResponseFormatMode {
    return this.format;
  }

  /**
   * Asks the server for `n` completions of `messages`, retrying transient failures. A request
   * whose `response_format` the server refuses (`refusesFormat`) is sent
   * again at once with the next form of `RESPONSE_FORMATS`; the first form accepted is kept.
   */
  async request(messages: ChatMessage[], n: number, rng: Rng, brief: TaskBrief): Promise<{ ok: true; samples: Sample[] } | Failed> {
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
        const info =
          err instanceof Error && err.message === 'the server answered without choices'
            ? { retryable: true, message: err.message }
            : classifyError(err, this.o.timeoutSeconds);
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
  async sampleInitial(key: string, messages: ChatMessage[], rng: Rng, brief: TaskBrief): Promise<{ ok: true; sample: Sample } | Failed> {
    const pooled = this.pool.get(key);
    if (pooled?.length) return { ok: true, sample: pooled.shift()! };
    const r = await this.request(messages, this.o.n, rng, brief);
    if (!r.ok) return r;
    this.pool.clear(); // older leftovers belong to prompts that will not come again
    this.pool.set(key, r.samples.slice(1));
    return { ok: true, sample: r.samples[0] };
  }
}

/**
 * The model's context and the prompt's size in the model's own tokens, asked of the server
 * (vLLM, llama-server, llama-cpp-python each answer in their own way) or learnt from a refusal,
 * so that the agent can tell whether its full prompt fits before it sends it.
 */
import type { ChatMessage } from '../types.js';
import type { ResolvedLlmOptions } from './options.js';
import { serverHeaders, serverRoot } from './server.js';

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

/** The tokenizer endpoints `countTokens` knows. */
type TokenizerEndpoint = 'vllm' | 'llama-server' | 'llama-cpp-python';
const TOKENIZER_LABELS: Record<TokenizerEndpoint, string> = {
  vllm: 'POST /tokenize (vLLM, chat template applied)',
  'llama-server': 'POST /apply-template + /tokenize (llama-server)',
  'llama-cpp-python': 'POST /extras/tokenize/count (llama-cpp-python, ChatML framing)',
};

/** What the agent learns of the model's context and tokenizer, asked once and kept. */
export class ContextProbe {
  /** The model's context in tokens: given, asked of the server, or learnt from a refusal (undefined: not asked yet). */
  private context: number | null | undefined;
  /** The tokenizer endpoint that answered (null: none does; undefined: not tried yet). */
  private tokenizer: TokenizerEndpoint | null | undefined;

  /** A probe of the server at `o.baseUrl`; `servedModel` names the model requests go to now. */
  constructor(
    private readonly o: Pick<ResolvedLlmOptions, 'baseUrl' | 'model' | 'apiKeyEnv' | 'timeoutSeconds' | 'contextTokens'>,
    private readonly servedModel: () => string,
  ) {
    this.context = o.contextTokens ?? undefined;
  }

  /** Keeps the context a refusal named. */
  learn(contextTokens: number): void {
    this.context = contextTokens;
  }

  /** The model's context in tokens: `contextTokens`, else what the server says (vLLM's `/v1/models`, llama-server's `/props`), else null. */
  async contextSize(): Promise<number | null> {
    if (this.context !== undefined) return this.context;
    const root = serverRoot(this.o.baseUrl);
    const models = await this.getJson(`${root}/v1/models`);
    const listed = Array.isArray((models as { data?: unknown })?.data) ? (models as { data: { id?: string; max_model_len?: unknown }[] }).data : [];
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
  async countTokens(messages: ChatMessage[]): Promise<{ tokens: number; by: string } | null> {
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
        const text = `${messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('')}<|im_start|>assistant\n`;
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

  /** A request to the server; the parsed JSON answer, or null on any failure (an error, a non-2xx status, a timeout). */
  private async fetchJson(url: string, init: { method: string; body?: string }): Promise<unknown> {
    try {
      const res = await fetch(url, {
        ...init,
        headers: serverHeaders(this.o.apiKeyEnv),
        signal: AbortSignal.timeout(Math.min(30, this.o.timeoutSeconds) * 1000),
      });
      if (!res.ok) return null;
      return await res.json();
    } catch {
      return null;
    }
  }
}

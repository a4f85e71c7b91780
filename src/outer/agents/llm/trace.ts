/**
 * What the LLM agent records of each proposal (the trace the store keeps): the conversation,
 * the completion with its token log-probabilities, every turn and HTTP attempt, the sampling
 * settings and the prompt's size. The GRPO export (outer/grpo-export.ts) reads it back.
 */
import type { ChatMessage } from '../types.js';
import type { ResponseFormatMode } from './response-format.js';

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

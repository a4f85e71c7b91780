/**
 * Which failed requests are tried again and after how long: timeouts, connection errors, 408,
 * 409, 429 and 5xx answers are retried with exponential backoff and jitter, or after the
 * server's `Retry-After`. The client's own retries are off, so every attempt is recorded.
 */
import OpenAI from 'openai';
import type { Rng } from '../../../util/rng.js';

const MAX_BACKOFF_MS = 60_000;
/** The longest `Retry-After` wait honoured, in milliseconds (a longer one is cut to it). */
export const MAX_RETRY_AFTER_MS = 300_000;

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
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return { retryable: true, message: `the request timed out${timeoutSeconds !== undefined ? ` after ${timeoutSeconds} s` : ''}` };
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return { retryable: true, message: `connection error: ${err.message}${err.cause ? ` (${(err.cause as Error).message})` : ''}` };
  }
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

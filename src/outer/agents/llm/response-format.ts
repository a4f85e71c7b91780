/**
 * How a request asks for structured output, and how the agent tells that the server refused
 * the form it asked in (so that it steps down to the next one, see completions.ts).
 */
import type { TaskBrief } from '../../../spec/brief.js';
import { grammarSchema } from '../../../spec/grammar-schema.js';
import { contextOverflow } from './context-probe.js';

/**
 * How a request asks for structured output, most exact first. A server that refuses one (see
 * `refusesFormat`; e.g. llama-cpp-python's server, which knows only `json_object`) gets the next one,
 * and the agent keeps the first one accepted: `json_schema` (OpenAI's form: vLLM, SGLang,
 * llama.cpp's llama-server, Ollama), `json_object+schema` (JSON mode with a `schema`, the form
 * of llama-cpp-python and llama-server), `json_object` (JSON mode; the reply is validated and
 * repaired as always), `none`.
 */
export const RESPONSE_FORMATS = ['json_schema', 'json_object+schema', 'json_object', 'none'] as const;
/** One of `RESPONSE_FORMATS`. */
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

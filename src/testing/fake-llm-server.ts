/**
 * A local stand-in for an OpenAI-compatible LLM server (vLLM, SGLang, llama.cpp, Ollama) for
 * tests: plain `node:http` on a real socket, speaking the chat.completions protocol with
 * scripted replies. It validates every request the way those servers do (model, messages,
 * `response_format`, `logprobs`, `n`, sampling ranges), answers with token log-probabilities
 * when asked, can fail with any HTTP status (429 with `Retry-After`, 500, …), delay or hang,
 * and implements vLLM's runtime LoRA endpoints `POST /v1/load_lora_adapter` and `GET /v1/models`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';

/** What the server does with one chat.completions request. */
export type FakeReply =
  /** Answer 200 with these contents, one per choice (a single string is repeated for `n`). */
  | { content: string | string[]; delayMs?: number; finishReason?: 'stop' | 'length' }
  /** Answer with an HTTP error, an OpenAI-style error body and optional headers (e.g. retry-after). */
  | { status: number; message?: string; headers?: Record<string, string> }
  /** Never answer (the client's timeout must fire). */
  | { hang: true };

/** A chat.completions request body as received. */
export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; schema: Record<string, unknown>; strict?: boolean } };
  logprobs?: boolean;
  top_logprobs?: number;
  n?: number;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  [key: string]: unknown;
}

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** The status the server answered with (null for a request left hanging). */
  status: number | null;
  /** For chat.completions: whether the body passed validation (and so reached the script). */
  valid?: boolean;
}

/** Decides the reply to the `index`-th chat request (0-based, counting valid requests only). */
export type FakeScript = FakeReply[] | ((body: ChatRequestBody, index: number) => FakeReply);

/** Options of the fake server. */
export interface FakeServerOptions {
  /** The base model's name (served as `model`). */
  model: string;
  /** Replies in order, or a function of the request; when a list runs out, `fallback` answers. */
  script: FakeScript;
  fallback?: FakeReply;
}

class BadRequest extends Error {
  constructor(
    message: string,
    readonly param: string | null,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** Splits text into pseudo-tokens (words, spaces, single punctuation marks). */
export function fakeTokens(text: string): string[] {
  return text.match(/\s+|[A-Za-z0-9_.-]+|[^\sA-Za-z0-9_.-]/g) ?? [];
}

/** A deterministic log-probability for a token (so tests can compare stored values). */
export function fakeLogprob(token: string, position: number): number {
  let h = position * 31;
  for (const c of token) h = (h * 33 + c.charCodeAt(0)) % 997;
  return -((h % 100) + 1) / 200;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a chat.completions body the way OpenAI-compatible servers do; throws BadRequest. */
function validateChat(body: unknown, models: Set<string>): ChatRequestBody {
  if (!isObject(body)) throw new BadRequest('the request body must be a JSON object', null);
  if (typeof body.model !== 'string' || !body.model) throw new BadRequest('model: required string', 'model');
  if (!models.has(body.model)) throw new BadRequest(`The model \`${body.model}\` does not exist.`, 'model', 404);
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new BadRequest('messages: a non-empty array is required', 'messages');
  body.messages.forEach((m, i) => {
    if (!isObject(m) || !['system', 'user', 'assistant', 'tool', 'developer'].includes(String(m.role))) {
      throw new BadRequest(`messages[${i}].role: expected system, user, assistant, tool or developer`, `messages[${i}].role`);
    }
    if (typeof m.content !== 'string') throw new BadRequest(`messages[${i}].content: expected a string`, `messages[${i}].content`);
  });
  const rf = body.response_format;
  if (rf !== undefined) {
    if (!isObject(rf) || !['text', 'json_object', 'json_schema'].includes(String(rf.type))) {
      throw new BadRequest('response_format.type: expected text, json_object or json_schema', 'response_format');
    }
    if (rf.type === 'json_schema') {
      const js = rf.json_schema;
      if (!isObject(js) || typeof js.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(js.name)) {
        throw new BadRequest('response_format.json_schema.name: required, letters, digits, _ and - only', 'response_format.json_schema.name');
      }
      if (!isObject(js.schema) || js.schema.type !== 'object')
        throw new BadRequest('response_format.json_schema.schema: expected a JSON Schema object', 'response_format.json_schema.schema');
    }
  }
  if (body.logprobs !== undefined && typeof body.logprobs !== 'boolean') throw new BadRequest('logprobs: expected a boolean', 'logprobs');
  if (body.top_logprobs !== undefined && body.top_logprobs !== null) {
    if (!Number.isInteger(body.top_logprobs) || (body.top_logprobs as number) < 0 || (body.top_logprobs as number) > 20)
      throw new BadRequest('top_logprobs: expected an integer in [0, 20]', 'top_logprobs');
    if (body.logprobs !== true) throw new BadRequest('top_logprobs requires logprobs to be true', 'top_logprobs');
  }
  if (body.n !== undefined && (!Number.isInteger(body.n) || (body.n as number) < 1 || (body.n as number) > 16))
    throw new BadRequest('n: expected an integer in [1, 16]', 'n');
  if (body.temperature !== undefined && (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 2))
    throw new BadRequest('temperature: expected a number in [0, 2]', 'temperature');
  if (body.top_p !== undefined && (typeof body.top_p !== 'number' || body.top_p <= 0 || body.top_p > 1))
    throw new BadRequest('top_p: expected a number in (0, 1]', 'top_p');
  for (const k of ['max_tokens', 'max_completion_tokens'] as const) {
    if (body[k] !== undefined && body[k] !== null && (!Number.isInteger(body[k]) || (body[k] as number) < 1))
      throw new BadRequest(`${k}: expected a positive integer`, k);
  }
  return body as unknown as ChatRequestBody;
}

/** The fake OpenAI-compatible server; `start()` it, point a client at `baseUrl`, `close()` it. */
export class FakeLlmServer {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  /** Adapters loaded through `/v1/load_lora_adapter`: name and path. */
  readonly adapters: { name: string; path: string }[] = [];
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private chatCount = 0;

  constructor(private readonly options: FakeServerOptions) {}

  /** The `/v1` base URL, once started. */
  baseUrl = '';

  /** The valid chat.completions request bodies received, in order. */
  chatRequests(): ChatRequestBody[] {
    return this.requests.filter((r) => r.valid).map((r) => r.body as ChatRequestBody);
  }

  /** Starts listening on 127.0.0.1 on a free port; resolves with the `/v1` base URL. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}/v1`;
    return this.baseUrl;
  }

  /** Stops the server, dropping any request left hanging. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private models(): Set<string> {
    return new Set([this.options.model, ...this.adapters.map((a) => a.name)]);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const record: RecordedRequest = { method: req.method ?? '', path: (req.url ?? '').split('?')[0], headers: req.headers, body: null, status: null };
    this.requests.push(record);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      record.status = status;
      const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
      res.writeHead(status, { 'content-type': typeof payload === 'string' ? 'text/plain' : 'application/json', ...headers });
      res.end(body);
    };
    const fail = (status: number, message: string, param: string | null = null, headers: Record<string, string> = {}): void =>
      send(
        status,
        { error: { message, type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error', param, code: status } },
        headers,
      );
    if (text) {
      try {
        record.body = JSON.parse(text);
      } catch {
        return fail(400, 'the request body is not JSON');
      }
    }
    if (req.method === 'GET' && record.path === '/v1/models') {
      const created = Math.floor(Date.now() / 1000);
      return send(200, {
        object: 'list',
        data: [
          { id: this.options.model, object: 'model', created, owned_by: 'fake', root: this.options.model, parent: null },
          ...this.adapters.map((a) => ({ id: a.name, object: 'model', created, owned_by: 'fake', root: a.path, parent: this.options.model })),
        ],
      });
    }
    if (req.method === 'POST' && record.path === '/v1/load_lora_adapter') {
      const b = record.body;
      if (!isObject(b) || typeof b.lora_name !== 'string' || typeof b.lora_path !== 'string' || !b.lora_name || !b.lora_path) {
        return fail(400, 'lora_name and lora_path are required strings');
      }
      if (this.models().has(b.lora_name)) return fail(400, `The lora adapter '${b.lora_name}' has already been loaded.`, 'lora_name');
      if (!existsSync(join(b.lora_path, 'adapter_config.json'))) return fail(400, `No adapter found for ${b.lora_path}`, 'lora_path');
      this.adapters.push({ name: b.lora_name, path: b.lora_path });
      return send(200, `Success: LoRA adapter '${b.lora_name}' added successfully.`);
    }
    if (req.method !== 'POST' || record.path !== '/v1/chat/completions') return fail(404, `no route ${req.method} ${record.path}`);
    if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ''))) return fail(401, 'missing bearer token');
    let body: ChatRequestBody;
    try {
      body = validateChat(record.body, this.models());
    } catch (err) {
      if (err instanceof BadRequest) return fail(err.status, err.message, err.param);
      throw err;
    }
    record.valid = true;
    const index = this.chatCount++;
    const { script, fallback } = this.options;
    const reply: FakeReply | undefined = typeof script === 'function' ? script(body, index) : (script[index] ?? fallback);
    if (!reply) return fail(500, `the fake server's script has no reply for request ${index}`);
    if ('hang' in reply) return; // the socket stays open until the client gives up or close()
    if ('status' in reply) return fail(reply.status, reply.message ?? `scripted error ${reply.status}`, null, reply.headers);
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    const n = body.n ?? 1;
    const contents = Array.isArray(reply.content) ? reply.content : new Array<string>(n).fill(reply.content);
    if (contents.length < n) return fail(500, `the fake server's script has ${contents.length} choices for n = ${n}`);
    let completionTokens = 0;
    const choices = contents.slice(0, n).map((content, i) => {
      const tokens = fakeTokens(content);
      completionTokens += tokens.length;
      return {
        index: i,
        message: { role: 'assistant', content },
        finish_reason: reply.finishReason ?? 'stop',
        logprobs: body.logprobs
          ? {
              content: tokens.map((token, p) => ({
                token,
                logprob: fakeLogprob(token, p),
                bytes: [...Buffer.from(token, 'utf8')],
                top_logprobs: [],
              })),
            }
          : null,
      };
    });
    const promptTokens = body.messages.reduce((a, m) => a + fakeTokens(m.content).length, 0);
    send(200, {
      id: `chatcmpl-fake-${index}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices,
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    });
  }
}

/**
 * `GET /v1/requests/{id}/events`: a request's progress as server-sent events, so a client waits
 * for rewards that take minutes without one long silent request that a proxy would cut.
 *
 * - `job`: a job of the request finished (data: its `GET /v1/jobs/{id}` row); jobs finished
 *   before the stream opened come first;
 * - `rewards`: the request is settled (data: what `POST /v1/rewards` answers); the stream ends;
 * - `interrupted`: the server is stopping (data: `{"error"}`); the request is kept and finishes
 *   after `rrl serve --resume`; the stream ends;
 * - `error`: the harness failed on the request for a reason of its own (data: `{"error"}`); the
 *   request stays pending (tried again on `--resume`); the stream ends;
 * - a `: keepalive` comment every `keepaliveMs` while nothing else is said.
 *
 * Streams are capped apart from request connections (`StreamGate` of serve/front-door.ts): a
 * few per request and a fixed number in all, past either a 503.
 */
import { streamSSE } from 'hono/streaming';
import type { StreamGate } from './front-door.js';
import { HttpError, type HttpContext } from './http.js';
import type { RewardService } from './service.js';

/** Default seconds between keepalive comments (under the usual 30–60 s idle limit of proxies). */
export const KEEPALIVE_SECONDS = 15;

/** The server's event streams: their keepalive, the streams open now, and the gate that caps them. */
export interface EventStreams {
  keepaliveMs: number;
  open: Set<Promise<void>>;
  gate: StreamGate;
}

/**
 * The event stream of request `id` (throws the service's 404 before the stream starts, and a
 * 503 past the caps of the streams' gate). The stream is in the open streams until its answer is
 * written out, so a stopping server can let it say `interrupted`.
 */
export function requestEvents(c: HttpContext, service: RewardService, id: number, streams: EventStreams): Response {
  const { keepaliveMs, open, gate } = streams;
  service.request(id); // 404 for an unknown request, as a JSON error
  // Open until its answer is written out whole (or its connection is gone).
  const streaming = new Promise<void>((resolve) => {
    c.env.outgoing.once('finish', resolve);
    c.env.outgoing.once('close', resolve);
  });
  const refused = gate.take(String(id), c.env.incoming.socket, streaming);
  if (refused) throw new HttpError(refused.status, refused.message);
  open.add(streaming);
  void streaming.then(() => open.delete(streaming));
  return streamSSE(c, async (stream) => {
    const announced: number[] = [];
    let wake = (): void => {};
    let interrupted = false;
    const onJob = (request: number, job: number): void => {
      if (request !== id) return;
      announced.push(job);
      wake();
    };
    const onDone = (request: number): void => {
      if (request === id) wake();
    };
    const onFailed = (request: number): void => {
      if (request === id) wake();
    };
    const onInterrupted = (): void => {
      interrupted = true;
      wake();
    };
    service.events.on('job', onJob);
    service.events.on('done', onDone);
    service.events.on('interrupted', onInterrupted);
    service.events.on('failed', onFailed);
    stream.onAbort(() => wake());
    try {
      const first = service.request(id);
      const sent = new Set<number>();
      const send = async (job: number): Promise<void> => {
        if (sent.has(job)) return;
        sent.add(job);
        await stream.writeSSE({ event: 'job', id: String(job), data: JSON.stringify(service.job(job)) });
      };
      for (const job of first.jobs) if (service.job(job).status !== 'pending') await send(job);
      while (!stream.aborted) {
        while (announced.length) await send(announced.shift()!);
        const now = service.request(id);
        if (now.status === 'done') {
          for (const job of now.jobs) await send(job);
          await stream.writeSSE({ event: 'rewards', data: JSON.stringify(now.answer) });
          return;
        }
        const failure = service.failure(id);
        if (failure !== null) {
          await stream.writeSSE({ event: 'error', data: JSON.stringify({ error: failure }) });
          return;
        }
        if (interrupted || service.stopped) {
          const error = `the server is stopping; request ${id} is kept and finishes when it is started again with --resume (reconnect then)`;
          await stream.writeSSE({ event: 'interrupted', data: JSON.stringify({ error }) });
          return;
        }
        const woken = new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), keepaliveMs);
          wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        if (!(await woken) && !stream.aborted) await stream.write(': keepalive\n\n');
      }
    } finally {
      service.events.off('job', onJob);
      service.events.off('done', onDone);
      service.events.off('interrupted', onInterrupted);
      service.events.off('failed', onFailed);
    }
  });
}

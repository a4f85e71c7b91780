/**
 * The dashboard's live updates: server-sent events at /api/events. While a page listens, each
 * watched store's `data_version` (a counter SQLite moves when another connection commits) is read
 * every `pollMs`, and the streams following a run that moved get `change`; new runs under a watched
 * directory are announced with `runs`. Streams are capped by the server (a `StreamGate`); a
 * comment line every 15 s keeps idle ones open.
 */
import type Database from 'better-sqlite3';
import type { RunCatalog } from './catalog.js';
import { dataVersion } from './queries.js';

/** Headers of an event stream (the security headers are added by the server). */
const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' };

/** One open stream: the run it follows (null: all) and its writer. */
interface Listener {
  run: string | null;
  send(text: string): void;
  end(): void;
}

/** The event streams of a dashboard and the polling that feeds them. */
export class LiveUpdates {
  private readonly clients = new Set<Listener>();
  private readonly versions = new Map<string, number>();
  private readonly encoder = new TextEncoder();
  private ticks = 0;
  private readonly poller: NodeJS.Timeout;
  private readonly heartbeat: NodeJS.Timeout;

  /** Starts polling every `pollMs`; `db` opens a run's store (null while it cannot be opened). */
  constructor(
    private readonly catalog: RunCatalog,
    private readonly db: (key: string) => Database.Database | null,
    pollMs: number,
  ) {
    this.poller = setInterval(() => this.tick(), pollMs);
    this.heartbeat = setInterval(() => {
      for (const c of this.clients) c.send(': ping\n\n');
    }, 15_000);
  }

  /** A stream of the changes of `run` (null: of every run). A HEAD request gets the stream's headers only, and holds no stream. */
  stream(run: string | null, head: boolean): Response {
    if (head) return new Response(null, { headers: STREAM_HEADERS });
    const clients = this.clients;
    const encoder = this.encoder;
    let client: Listener;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        client = {
          run,
          send: (text) => controller.enqueue(encoder.encode(text)),
          end: () => {
            try {
              controller.close();
            } catch {
              // the client is gone already
            }
          },
        };
        clients.add(client);
        client.send('retry: 2000\n\n');
      },
      // The client hung up (@hono/node-server cancels the stream when the connection closes).
      cancel() {
        clients.delete(client);
      },
    });
    return new Response(body, { headers: STREAM_HEADERS });
  }

  /** Stops polling and ends every stream. */
  close(): void {
    clearInterval(this.poller);
    clearInterval(this.heartbeat);
    for (const c of this.clients) c.end();
    this.clients.clear();
  }

  /** Change detection: one cheap pragma per watched store per tick, only while a page listens. */
  private tick(): void {
    if (this.clients.size === 0) return;
    this.ticks += 1;
    if (this.ticks % 10 === 0 && this.catalog.refresh()) this.broadcast(null, 'runs', {});
    const all = [...this.clients].some((c) => c.run === null);
    const watched = all ? this.catalog.list().map((e) => e.key) : [...new Set([...this.clients].map((c) => c.run as string))];
    for (const key of watched) {
      const c = this.db(key);
      if (!c) continue;
      let v: number;
      try {
        v = dataVersion(c);
      } catch {
        continue;
      }
      const before = this.versions.get(key);
      this.versions.set(key, v);
      if (before !== undefined && before !== v) this.broadcast(key, 'change', { run: key });
    }
  }

  /** Sends `event` to the streams following `run` (null: every stream). */
  private broadcast(run: string | null, event: string, data: unknown): void {
    const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const c of this.clients) if (run === null || c.run === null || c.run === run) c.send(text);
  }
}

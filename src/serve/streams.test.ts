import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RewardService, type ServeConfig } from './service.js';
import { type RunningServer, startServer } from './server.js';
import { JobsAccepted } from './schemas.js';
import type { Executor, JobResult } from '../run/executor.js';
import { arsSpec } from '../testing/specs.js';

// Event streams are capped apart from request connections: streams held open never starve the API.
const task = 'cartpole-short';
const config: ServeConfig = { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } };

/**
 * An executor whose jobs wait until they are cancelled (a cluster with no free node): every
 * request stays pending for as long as the test needs.
 */
function heldExecutor(): Executor {
  const waiting = new Set<() => void>();
  const cancelled = (): JobResult => ({ status: 'failed', kind: 'cancelled', error: 'cancelled: the server is shutting down', cost: {} });
  return {
    name: 'held',
    slots: 1,
    execute: (_req, o) =>
      new Promise<JobResult>((resolve) => {
        const done = (): void => {
          waiting.delete(done);
          resolve(cancelled());
        };
        waiting.add(done);
        o?.signal?.addEventListener('abort', done, { once: true });
      }),
    cancelAll: () => {
      for (const done of [...waiting]) done();
    },
    close: async () => {},
  };
}

/** One stream opened on its own connection: its status, its body once it ended (refusals), and the request to cut it. */
function openStream(server: RunningServer, id: number): Promise<{ status: number; body: Promise<string>; req: ClientRequest; res: IncomingMessage }> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: `/v1/requests/${id}/events`, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      const body = new Promise<string>((ok) => {
        res.on('data', (c: string) => (text += c));
        res.on('end', () => ok(text));
        res.on('close', () => ok(text));
      });
      resolve({ status: res.statusCode ?? 0, body, req, res });
    });
    req.on('error', reject);
    req.end();
  });
}

test('streams held open on pending requests leave request connections free; past 4 per request or 64 in all a stream is 503', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-serve-streams-'));
  const executor = heldExecutor();
  const service = RewardService.open(dir, config, executor, { maxQueue: 256 });
  const server = await startServer(service, { port: 0 });
  const held: ClientRequest[] = [];
  try {
    const submit = async (seed: number): Promise<number> => {
      const res = await fetch(`${server.url}/v1/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task, completions: [JSON.stringify(arsSpec(task, 500, seed))] }),
      });
      assert.equal(res.status, 202);
      return JobsAccepted.parse(await res.json()).request;
    };
    const requests: number[] = [];
    for (let i = 0; i < 17; i++) requests.push(await submit(100 + i));

    // 64 streams on one pending request: 4 open, the rest are refused with one line.
    const one = await Promise.all(Array.from({ length: 64 }, () => openStream(server, requests[0])));
    for (const s of one) held.push(s.req);
    const open = one.filter((s) => s.status === 200);
    assert.equal(open.length, 4, 'four streams on one request');
    for (const s of one.filter((x) => x.status !== 200)) {
      assert.equal(s.status, 503);
      const error = (JSON.parse(await s.body) as { error: string }).error;
      assert.match(error, new RegExp(`^too many event streams on request ${requests[0]}: at most 4 are open at once on one`));
      assert.doesNotMatch(error, /\n/);
    }

    // 60 more on 15 other requests: 64 in all; one more, on a request that has none, is refused.
    const more = await Promise.all(requests.slice(1, 16).flatMap((id) => Array.from({ length: 4 }, () => openStream(server, id))));
    for (const s of more) held.push(s.req);
    assert.deepEqual(
      more.map((s) => s.status),
      more.map(() => 200),
    );
    const over = await openStream(server, requests[16]);
    held.push(over.req);
    assert.equal(over.status, 503);
    assert.match((JSON.parse(await over.body) as { error: string }).error, /^too many event streams: at most 64 are open at once/);

    // With 64 streams open, 30 other requests at once are all answered.
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => fetch(`${server.url}/v1/requests/${requests[i % requests.length]}`, { headers: { connection: 'close' } })),
    );
    assert.deepEqual(
      answers.map((r) => r.status),
      answers.map(() => 200),
    );
    for (const r of answers) await r.body?.cancel();

    // A stream that ends makes room on its request.
    const first = open[0];
    const closed = new Promise((ok) => first.res.once('close', ok));
    first.req.destroy();
    await closed;
    let again = 0;
    for (let i = 0; i < 100 && again !== 200; i++) {
      const s = await openStream(server, requests[0]);
      held.push(s.req);
      again = s.status;
      if (again !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(again, 200);
  } finally {
    for (const r of held) r.destroy();
    await server.close();
    await service.close();
  }
});

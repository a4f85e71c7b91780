import test from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { type ClientRequest, request } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../store/store.js';
import { writeLargeRun } from '../testing/large-run.js';
import { RunCatalog, findRunDirs } from './catalog.js';
import { diffPaths } from './queries.js';
import { startDashboard } from './server.js';

const root = mkdtempSync(join(tmpdir(), 'rrl-dash-'));
writeLargeRun(join(root, 'big'), { iterations: 4, group: 5 });
writeLargeRun(join(root, 'nested', 'deeper', 'second'), { iterations: 1, group: 2, tasks: ['cartpole-short'] });

/** A GET (or another method) with raw path bytes; resolves status, headers and body text. */
function get(
  base: string,
  path: string,
  o: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: o.method ?? 'GET', headers: o.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
const json = async (base: string, path: string): Promise<any> => {
  const r = await get(base, path);
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  return JSON.parse(r.body);
};

test('the catalog finds runs under a directory (not inside a run), with URL-safe keys', () => {
  mkdirSync(join(root, 'big', 'jobs', 'j00001'), { recursive: true });
  assert.deepEqual(findRunDirs(root), [join(root, 'big'), join(root, 'nested', 'deeper', 'second')]);
  const c = new RunCatalog([root, join(root, 'big')]);
  assert.deepEqual(
    c.list().map((e) => e.key),
    ['big', 'nested.deeper.second'],
    'a run named twice is listed once',
  );
  assert.throws(() => new RunCatalog([join(root, 'no-such-dir')]), /no-such-dir: no such directory/);
});

test('diffPaths names the leaves that differ, arrays of numbers as one value', () => {
  assert.deepEqual(diffPaths({ a: 1, m: { hidden: [64, 64], act: 'tanh' } }, { a: 1, m: { hidden: [64], act: 'tanh' }, extra: true }), ['m.hidden', 'extra']);
  assert.deepEqual(diffPaths({ s: [{ id: 'x', w: 1 }] }, { s: [{ id: 'x', w: 2 }] }), ['s[0].w']);
  assert.deepEqual(diffPaths({ a: [1] }, { a: [1] }), []);
});

test('the API gives the runs, a run’s figures, filtered jobs and a job with its differences', async () => {
  const d = await startDashboard(new RunCatalog([root]), { port: 0 });
  try {
    const runs = await json(d.url, '/api/runs');
    assert.deepEqual(
      runs.map((r: { key: string }) => r.key),
      ['big', 'nested.deeper.second'],
    );
    const big = runs[0].summary;
    assert.equal(big.jobs, 4 * 5 * 2);
    assert.equal(big.agent, 'controller');
    assert.ok(big.bestNormalized > 0 && big.bestNormalized <= 1);

    const run = await json(d.url, '/api/runs/big');
    assert.equal(run.iterations.length, 4);
    assert.equal(run.perTask.length, 8);
    assert.deepEqual(
      run.baselines.map((b: { task: string }) => b.task),
      ['cartpole-short', 'iris-species'],
    );
    assert.equal(run.iterations[0].entropy, 20);
    assert.equal(run.iterations[0].decisions, 2, "the controller's choices per proposal, from its traces");
    assert.deepEqual(run.promotions, [], 'no successive halving in this run');
    for (const it of run.iterations) {
      const parts = run.perTask.filter((p: { iteration: number }) => p.iteration === it.iteration);
      assert.equal(it.jobs, 10);
      assert.equal(
        parts.reduce((a: number, p: { jobs: number }) => a + p.jobs, 0),
        it.jobs,
      );
      assert.equal(
        parts.reduce((a: number, p: { failed: number }) => a + p.failed, 0),
        it.failed,
      );
    }

    const failed = await json(d.url, '/api/runs/big/jobs?status=failed');
    assert.ok(failed.rows.length > 0);
    for (const j of failed.rows) {
      assert.equal(j.status, 'failed');
      assert.match(j.error, /wall-clock limit/);
    }
    const one = await json(d.url, '/api/runs/big/jobs?task=iris-species&iteration=2&kind=proposal');
    assert.equal(one.rows.length, 5);
    assert.deepEqual(one.options.iterations, [0, 1, 2, 3]);

    const ok = (await json(d.url, '/api/runs/big/jobs?status=succeeded&task=cartpole-short&iteration=3')).rows[0];
    const job = await json(d.url, `/api/runs/big/jobs/${ok.id}`);
    assert.equal(job.job.id, ok.id);
    assert.ok(job.baseline && job.bestBefore, 'compared with the baseline and the best earlier job');
    assert.ok(job.diff.baseline.includes('algorithm.name'), `differs from the PPO baseline in the algorithm: ${job.diff.baseline}`);
    assert.ok(job.diff.best.includes('seed'));
    assert.equal(job.curves['charts/episodic_return'].step.length, 50);
    assert.ok(job.job.stderr > 0);
  } finally {
    await d.close();
  }
});

test('hostile input gets a 4xx with a one-line reason; nothing but GET and HEAD is answered; the store is untouched', async () => {
  const file = join(root, 'big', 'store.db');
  const before = createHash('sha256').update(readFileSync(file)).digest('hex');
  const d = await startDashboard(new RunCatalog([root]), { port: 0 });
  try {
    const cases: [string, number, RegExp, string?][] = [
      ['/api/runs/nope', 404, /no run "nope"/],
      ['/api/runs/big/jobs/abc', 400, /job id: expected a non-negative integer, got "abc"/],
      ['/api/runs/big/jobs/99999', 404, /has no job 99999/],
      ['/api/runs/big/jobs/-1', 400, /job id/],
      ['/api/runs/big/jobs?status=DROP%20TABLE', 400, /status: expected one of/],
      ['/api/runs/big/jobs?iteration=1e3', 400, /iteration: expected/],
      ['/api/runs/big/jobs?sort=x', 400, /unknown filter "sort"/],
      ['/api/runs/..%2f..%2fetc', 400, /may not contain ".."/],
      ['/api/runs/%2e%2e/jobs', 400, /may not contain ".."/],
      ['/runs/../../../etc/passwd', 400, /may not contain ".."/],
      ['/static/..%2F..%2Fpackage.json', 400, /may not contain ".."/],
      ['/api/runs/a%00b', 400, /NUL/],
      ['/api/runs/%ZZ', 400, /percent-encoding|malformed/],
      ['/api/runs/a%20b', 400, /run key: expected letters/],
      ['/runs/nope/jobs', 404, /no run "nope"/],
      ['/etc/passwd', 404, /no page/],
      ['/api/events?run=nope', 404, /no run "nope"/],
      ['/api/runs', 405, /read-only/, 'POST'],
      ['/api/runs/big', 405, /read-only/, 'DELETE'],
      ['/api/runs/big/jobs/1', 405, /read-only/, 'PUT'],
    ];
    for (const [path, status, why, method] of cases) {
      const r = await get(d.url, path, { method });
      assert.equal(r.status, status, `${method ?? 'GET'} ${path}: ${r.body}`);
      const text = path.startsWith('/api/') ? JSON.parse(r.body).error : r.body.trim();
      assert.match(text, why, path);
      assert.equal(text.split('\n').length, 1, `${path}: one line`);
    }
  } finally {
    await d.close();
  }
  assert.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), before);
});

test('server-sent events tell the page when a run changes', async () => {
  const dir = join(root, 'live');
  const store = new Store(dir);
  store.createRun('run-live', { tasks: ['cartpole-short'], agent: 'random', iterations: 2, group: 1, seed: 1 });
  const d = await startDashboard(new RunCatalog([dir]), { port: 0, pollMs: 20 });
  try {
    const u = new URL(d.url);
    const got = await new Promise<string>((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: '/api/events?run=live' }, (res) => {
        assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
        let text = '';
        let wrote = false;
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
          if (!wrote && text.includes('retry:')) {
            wrote = true;
            // After the server has seen the store's version once, a commit by the writer.
            setTimeout(() => store.startIteration('run-live', 0), 200);
          }
          if (text.includes('event: change')) {
            req.destroy();
            resolve(text);
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
    assert.match(got, /event: change\ndata: \{"run":"live"\}/);
    const run = await json(d.url, '/api/runs/live');
    assert.equal(run.summary.id, 'run-live');
  } finally {
    await d.close();
    store.close();
  }
});

test('a transfer experiment: its report, its plots (a fixed list, as images that run nothing)', async () => {
  const dir = join(root, 'exp', 'transfer-1');
  mkdirSync(join(dir, 'meta'), { recursive: true });
  writeLargeRun(join(dir, 'meta'), { iterations: 1, group: 2, tasks: ['cartpole-short'] });
  writeFileSync(join(dir, 'transfer.md'), '# Transfer experiment\n\n| task | zero-shot |\n| --- | --- |\n| iris-species | 0.667 |\n');
  writeFileSync(join(dir, 'transfer.json'), JSON.stringify({ heldOut: { zeroShot: 0.667 } }));
  writeFileSync(join(dir, 'held-out.svg'), '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
  const d = await startDashboard(new RunCatalog([join(root, 'exp')]), { port: 0 });
  try {
    assert.deepEqual(await json(d.url, '/api/experiments'), [{ key: 'transfer-1', dir }]);
    assert.deepEqual(
      (await json(d.url, '/api/runs')).map((r: { key: string }) => r.key),
      ['transfer-1.meta'],
      "the experiment's runs are runs too",
    );
    const e = await json(d.url, '/api/experiments/transfer-1');
    assert.match(e.markdown, /\| iris-species \| 0\.667 \|/);
    assert.deepEqual(e.result, { heldOut: { zeroShot: 0.667 } });
    assert.deepEqual(e.plots, ['held-out.svg']);
    const svg = await get(d.url, '/api/experiments/transfer-1/plots/held-out.svg');
    assert.equal(svg.status, 200);
    assert.equal(svg.headers['content-type'], 'image/svg+xml');
    assert.match(String(svg.headers['content-security-policy']), /default-src 'none'/);
    for (const [path, status, why] of [
      ['/api/experiments/transfer-1/plots/transfer.json', 404, /no plot "transfer.json"/],
      ['/api/experiments/transfer-1/plots/learning-curve.svg', 404, /has no learning-curve.svg/],
      ['/api/experiments/transfer-1/plots/..%2f..%2fstore.db', 400, /may not contain ".."/],
      ['/api/experiments/nope', 404, /no experiment "nope"/],
      ['/experiments/nope', 404, /no experiment "nope"/],
    ] as const) {
      const r = await get(d.url, path);
      assert.equal(r.status, status, path);
      assert.match(path.startsWith('/api/') ? JSON.parse(r.body).error : r.body, why, path);
    }
    assert.equal((await get(d.url, '/experiments/transfer-1')).status, 200);
  } finally {
    await d.close();
  }
});

test('beyond loopback every request needs the token: header, or a cookie set by ?token=', async () => {
  const catalog = new RunCatalog([join(root, 'big')]);
  assert.throws(() => startDashboard(catalog, { host: '0.0.0.0', port: 0 }), /needs a bearer token/);
  const d = await startDashboard(catalog, { host: '0.0.0.0', port: 0, token: 's3cret-token' });
  try {
    const base = `http://127.0.0.1:${d.port}`;
    const no = await get(base, '/api/runs');
    assert.equal(no.status, 401);
    assert.match(JSON.parse(no.body).error, /token is required/);
    assert.equal((await get(base, '/api/runs', { headers: { authorization: 'Bearer wrong' } })).status, 401);
    assert.equal((await get(base, '/', {})).status, 401);
    assert.equal((await get(base, '/api/runs', { headers: { authorization: 'Bearer s3cret-token' } })).status, 200);
    const login = await get(base, '/runs/big?token=s3cret-token');
    assert.equal(login.status, 303);
    assert.equal(login.headers.location, '/runs/big');
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    assert.match(String(login.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
    assert.equal((await get(base, '/api/runs/big', { headers: { cookie } })).status, 200);
  } finally {
    await d.close();
  }
});

test('a run with successive halving: per rung, the jobs trained and those promoted; its rung jobs filter by kind', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'rrl-dash-asha-')), 'asha');
  const store = new Store(dir);
  const task = 'iris-species';
  try {
    store.createRun('asha', { tasks: [task], agent: 'controller', iterations: 1, group: 3, seed: 1, reward: { rule: 'improvement', lambda: 0.5 } });
    store.startIteration('asha', 0);
    const proposals = store.addJobs(
      'asha',
      [0, 1, 2].map((slot) => ({ round: 0, slot, task, kind: 'proposal' as const, agent: 'controller', spec: {}, trace: null })),
    );
    let slot = 0; // rung jobs number their slots on across rungs, as the loop does
    const rung = (r: number, parents: number[], share: number): number[] =>
      store.addJobs(
        'asha',
        parents.map((parentId) => ({
          round: 0,
          slot: slot++,
          task,
          kind: 'rung' as const,
          agent: 'controller',
          spec: {},
          trace: null,
          rung: r,
          parentId,
          share,
        })),
      );
    const r0 = rung(0, proposals, 1 / 3);
    r0.forEach((id, k) =>
      store.finishJob(id, {
        status: 'succeeded',
        examples: 100,
        cpuSeconds: 0.1,
        wallSeconds: 0.1,
        score: { raw: 0.5 + k / 10, normalized: 0.2 + k / 10, stderr: 0.01 },
      }),
    );
    // The best of rung 0 goes on; rung 1 would have had it alone, so it is skipped: rung 2 is the full budget.
    const r1 = rung(2, [proposals[2]], 1);
    store.finishJob(r1[0], { status: 'succeeded', examples: 300, cpuSeconds: 0.3, wallSeconds: 0.3, score: { raw: 0.9, normalized: 0.8, stderr: 0.01 } });
  } finally {
    store.close();
  }
  const d = await startDashboard(new RunCatalog([dir]), { port: 0 });
  try {
    const run = await json(d.url, `/api/runs/${(await json(d.url, '/api/runs'))[0].key}`);
    assert.deepEqual(
      run.promotions.map((p: { rung: number; trained: number; promoted: number; best: number }) => [p.rung, p.trained, p.promoted, p.best]),
      [
        [0, 3, 1, 0.4],
        [2, 1, 0, 0.8],
      ],
    );
    const key = (await json(d.url, '/api/runs'))[0].key;
    assert.equal((await json(d.url, `/api/runs/${key}/jobs?kind=rung`)).rows.length, 4);
  } finally {
    await d.close();
  }
});

test('without a token only a loopback Host is served and an Origin must be the dashboard’s own: pages, JSON and event streams', async () => {
  const d = await startDashboard(new RunCatalog([join(root, 'big')]), { port: 0 });
  try {
    const own = `127.0.0.1:${d.port}`;
    for (const path of ['/', '/runs/big', '/api/runs', '/api/runs/big', '/api/events', '/static/app.js']) {
      // A DNS-rebinding page names its own host.
      const rebound = await get(d.url, path, { headers: { host: `evil.example:${d.port}` } });
      assert.equal(rebound.status, 421, path);
      const why = path.startsWith('/api/') ? JSON.parse(rebound.body).error : rebound.body.trim();
      assert.match(why, /Host "evil.example:\d+" is not this server/, path);
      assert.equal(why.split('\n').length, 1);
      // A page of another origin (a fetch, an EventSource) sends its Origin.
      const foreign = await get(d.url, path, { headers: { origin: 'http://evil.example' } });
      assert.equal(foreign.status, 403, path);
      assert.match(path.startsWith('/api/') ? JSON.parse(foreign.body).error : foreign.body, /another origin/, path);
    }
    assert.equal((await get(d.url, '/api/runs', { headers: { host: `localhost:${d.port}`, origin: `http://localhost:${d.port}` } })).status, 200);
    assert.equal((await get(d.url, '/api/runs', { headers: { host: own, origin: `http://${own}` } })).status, 200);
  } finally {
    await d.close();
  }
});

test('a malformed percent-encoding in any path is 400 with one line', async () => {
  const d = await startDashboard(new RunCatalog([root]), { port: 0 });
  try {
    for (const path of ['/api/experiments/x/plots/%ZZ', '/runs/%E0%A4%A', '/%', '/api/runs/big/jobs/%c0%af']) {
      const r = await get(d.url, path);
      assert.equal(r.status, 400, path);
      const why = path.startsWith('/api/') ? JSON.parse(r.body).error : r.body.trim();
      assert.match(why, /malformed percent-encoding/, path);
      assert.equal(why.split('\n').length, 1);
    }
  } finally {
    await d.close();
  }
});

test('event streams past the cap are refused with 503 and one line; a closed one makes room', async () => {
  const d = await startDashboard(new RunCatalog([join(root, 'big')]), { port: 0, maxStreams: 2 });
  const u = new URL(d.url);
  const open = (): Promise<ClientRequest> =>
    new Promise((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: '/api/events' }, (res) => {
        assert.equal(res.statusCode, 200);
        resolve(req);
      });
      req.on('error', reject);
      req.end();
    });
  const head = await get(d.url, '/api/events', { method: 'HEAD' });
  assert.equal(head.status, 200, 'HEAD gets the headers of a stream and holds none');
  assert.equal(head.headers['content-type'], 'text/event-stream; charset=utf-8');
  const streams = [await open(), await open()];
  try {
    const refused = await get(d.url, '/api/events');
    assert.equal(refused.status, 503);
    assert.match(JSON.parse(refused.body).error, /too many event streams: at most 2 are open at once/);
    assert.equal((await get(d.url, '/api/runs')).status, 200, 'the rest of the API still answers');
    streams.pop()!.destroy();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = await new Promise<number>((resolve) => {
        const req = request({ host: u.hostname, port: u.port, path: '/api/events' }, (res) => {
          resolve(res.statusCode ?? 0);
          if (res.statusCode === 200) streams.push(req);
          else res.resume();
        });
        req.on('error', () => resolve(0));
        req.end();
      });
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status, 200);
  } finally {
    for (const s of streams) s.destroy();
    await d.close();
  }
});

test('event streams are counted apart from connections: streams open up to their cap leave the API answering', async () => {
  const d = await startDashboard(new RunCatalog([join(root, 'big')]), { port: 0, maxConnections: 2, maxStreams: 4 });
  const u = new URL(d.url);
  const streams: ClientRequest[] = [];
  const open = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: '/api/events', agent: false }, (res) => {
        streams.push(req);
        if (res.statusCode !== 200) res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await open());
    assert.deepEqual(statuses, [200, 200, 200, 200], 'four streams, over a cap of two connections');
    for (let i = 0; i < 3; i++) assert.equal((await get(d.url, '/api/runs', { headers: { connection: 'close' } })).status, 200);
    assert.equal(await open(), 503, 'the fifth stream is over the stream cap');
  } finally {
    for (const s of streams) s.destroy();
    await d.close();
  }
});

test('the dashboard’s connections and request time are limited too: past the cap 503, a half-sent request 408', async () => {
  const catalog = new RunCatalog([join(root, 'big')]);
  const capped = await startDashboard(catalog, { port: 0, maxConnections: 1 });
  const timed = await startDashboard(catalog, { port: 0, bodyTimeoutMs: 300 });
  const read = (port: number, write: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => s.write(write));
      let text = '';
      s.setEncoding('utf8');
      s.on('data', (c: string) => (text += c));
      s.on('error', reject);
      s.on('close', () => resolve(text));
    });
  // Connections are accepted in the order they were made: the held one is counted first.
  const held = connect(capped.port, '127.0.0.1');
  try {
    await once(held, 'connect');
    const over = await read(capped.port, `GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:${capped.port}\r\n\r\n`);
    assert.match(over, /^HTTP\/1\.1 503 [^]*\r\n\r\ntoo many connections: this server keeps at most 1 open; retry later\n$/);
    const slow = await read(timed.port, `GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:${timed.port}\r\n`);
    assert.match(slow, /^HTTP\/1\.1 408 [^]*\r\n\r\nthe request did not arrive whole within 300 ms\n$/);
  } finally {
    held.destroy();
    await capped.close();
    await timed.close();
  }
});

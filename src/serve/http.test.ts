import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { z } from 'zod';
import { createDoorServer } from './front-door.js';
import {
  HttpError,
  type Listening,
  bearerToken,
  createApp,
  errorHeaders,
  frontDoor,
  jsonBody,
  jsonContent,
  jsonResponse,
  limitBody,
  listen,
  nodeListener,
  rawParam,
  refuseUnreadable,
} from './http.js';

/** A small server on the shared layer: a token, a JSON route with a 64-byte limit, a parameter route. */
function start(token: string | null): Promise<Listening> {
  const app = createApp(
    (c, err) => jsonResponse({ error: err.message }, err.status, errorHeaders(c, err)),
    (c) => new HttpError(404, `no route ${c.req.path}`),
  );
  app.use(frontDoor({ token: token !== null, listenHost: '127.0.0.1' }), bearerToken(token, 'token please'), refuseUnreadable);
  app.post('/echo', jsonContent, limitBody(64), async (c) => jsonResponse(await jsonBody(c, z.object({ n: z.number() }).strict())));
  app.get('/ids/:id', (c) => jsonResponse({ raw: rawParam(c, 'id'), decoded: c.req.param('id') }));
  app.get('/busy', () => {
    throw new HttpError(429, 'busy', 7);
  });
  const server = createDoorServer({}, (message) => ({ type: 'application/json', text: JSON.stringify({ error: message }) }), nodeListener(app));
  return listen(server, '127.0.0.1', 0);
}

/** Everything a socket receives for `text` until the server closes it or `ms` pass. */
function exchange(port: number, text: string, ms = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (got += c));
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
    setTimeout(() => socket.destroy(), ms).unref();
  });
}

let open: Listening;
let guarded: Listening;
before(async () => {
  open = await start(null);
  guarded = await start('s3cret');
});
after(async () => {
  await open.close();
  await guarded.close();
});

const post = (base: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

test('a JSON body is parsed with its schema; not JSON, a wrong shape or another type is refused with one line', async () => {
  assert.deepEqual(await (await post(open.url, '{"n": 3}')).json(), { n: 3 });
  const cases: [string, Record<string, string>, number, RegExp][] = [
    ['{"n": ', {}, 400, /^the body is not JSON: /],
    ['{"n": "x"}', {}, 400, /^n: Invalid input: expected number/],
    ['{"n": 1, "m": 2}', {}, 400, /^body: Unrecognized key: "m"/],
    ['{"n": 1}', { 'content-type': 'text/plain' }, 415, /must be application\/json/],
  ];
  for (const [body, headers, status, why] of cases) {
    const res = await post(open.url, body, headers);
    assert.equal(res.status, status, body);
    assert.match(((await res.json()) as { error: string }).error, why, body);
  }
});

test('a body over the limit is 413: by its Content-Length, or as it arrives when sent in chunks', async () => {
  const big = JSON.stringify({ n: 1, pad: 'x'.repeat(100) });
  const declared = await post(open.url, big);
  assert.equal(declared.status, 413);
  assert.equal(((await declared.json()) as { error: string }).error, `the body is ${Buffer.byteLength(big)} bytes; the limit is 64`);
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const u = new URL(open.url);
    const req = request({ host: u.hostname, port: u.port, path: '/echo', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.write(big.slice(0, 50));
    req.end(big.slice(50));
  });
  assert.equal(chunked.status, 413);
  assert.equal(JSON.parse(chunked.body).error, 'the body is over the limit of 64 bytes');
});

test('a refused upload closes the connection; an error carries its Retry-After', async () => {
  const head = `POST /echo HTTP/1.1\r\nHost: 127.0.0.1:${open.port}\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\n`;
  const answer = await exchange(open.port, `${head}{"n":`);
  assert.match(answer, /^HTTP\/1\.1 415 [^]*\r\nconnection: close\r\n/i);
  const busy = await fetch(`${open.url}/busy`);
  assert.equal(busy.status, 429);
  assert.equal(busy.headers.get('retry-after'), '7');
  assert.notEqual(busy.headers.get('connection'), 'close', 'a GET has no body left to wait for');
});

test('the front door and the token: 421 for a foreign Host without a token, 401 with WWW-Authenticate', async () => {
  const no = await fetch(`${guarded.url}/ids/1`);
  assert.equal(no.status, 401);
  assert.equal(no.headers.get('www-authenticate'), 'Bearer');
  assert.equal((await fetch(`${guarded.url}/ids/1`, { headers: { authorization: 'Bearer s3cret' } })).status, 200);
  const foreign = await exchange(open.port, `GET /ids/1 HTTP/1.1\r\nHost: evil.example\r\nconnection: close\r\n\r\n`);
  assert.match(foreign, /^HTTP\/1\.1 421 [^]*is not this server/);
});

test('routes match the path as sent: a parameter is decoded once, its raw form is at hand', async () => {
  assert.deepEqual(await (await fetch(`${open.url}/ids/%31`)).json(), { raw: '%31', decoded: '1' });
  assert.deepEqual(await (await fetch(`${open.url}/ids/a%252F`)).json(), { raw: 'a%252F', decoded: 'a%2F' });
  const res = await fetch(`${open.url}/ids%2F1`);
  assert.equal(res.status, 404, 'an encoded slash does not split the path');
  assert.deepEqual(await res.json(), { error: 'no route /ids%2F1' });
});

test('a request @hono/node-server cannot read passes the front door and the token first, then is 400', async () => {
  const target = (port: number, extra = ''): string => `GET /ids\\1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}connection: close\r\n\r\n`;
  assert.match(await exchange(open.port, target(open.port)), /^HTTP\/1\.1 400 [^]*"the request could not be read: Backslash in request path"/);
  assert.match(await exchange(guarded.port, target(guarded.port)), /^HTTP\/1\.1 401 /);
  assert.match(await exchange(guarded.port, target(guarded.port, 'authorization: Bearer s3cret\r\n')), /^HTTP\/1\.1 400 /);
  const badHost = await exchange(open.port, `GET /ids/1 HTTP/1.1\r\nHost: a b\r\nconnection: close\r\n\r\n`);
  assert.match(badHost, /^HTTP\/1\.1 421 /, 'without a token an unreadable Host is refused by the front door');
});

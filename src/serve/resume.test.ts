import test from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { Store } from '../store/store.js';
import { arsSpec } from '../testing/specs.js';
import { JobResponse, RewardsResponse } from './schemas.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const task = 'cartpole-short';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts `rrl serve` and resolves with the URL it prints once it listens. */
async function serve(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--workers', '1', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((ok, fail) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) ok(m[1]);
    });
    child.once('exit', (code) => fail(new Error(`rrl serve exited with ${code}: ${err}`)));
  });
  return { child, url };
}

test('rrl serve killed with SIGKILL resumes: finished jobs are kept, unfinished ones run again, a repeated request gets the same answer', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-serve-resume-'));
  const completions = [JSON.stringify(arsSpec(task, 5000, 41)), JSON.stringify(arsSpec(task, 5000, 42))];
  const first = await serve(['--run', dir]);
  const lost = fetch(`${first.url}/v1/rewards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ task, completions }),
  }).catch((e: unknown) => e);

  // Killed once one job (of seven: the baseline on five seeds and two proposals, on one worker) has finished.
  const store = new Store(dir);
  let before: Map<number, string | null> = new Map();
  try {
    for (;;) {
      const run = store.getRun();
      const jobs = run ? store.jobs(run.id) : [];
      if (jobs.some((j) => j.status !== 'pending')) {
        before = new Map(jobs.filter((j) => j.status !== 'pending').map((j) => [j.id, j.finishedAt]));
        break;
      }
      await sleep(25);
    }
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    const run = store.getRun()!;
    const jobs = store.jobs(run.id);
    assert.equal(jobs.length, 7);
    assert.ok(
      jobs.some((j) => j.status === 'pending'),
      'the kill left a job unfinished',
    );
    assert.deepEqual(
      store.requests(run.id).map((r) => r.status),
      ['pending'],
    );
    assert.ok((await lost) instanceof Error, 'the killed server never answered');

    // Restarted with --resume: it finishes the request by itself.
    const second = await serve(['--run', dir, '--resume']);
    try {
      while (store.requests(run.id)[0].status !== 'done') await sleep(50);
      const after = store.jobs(run.id);
      assert.ok(
        after.every((j) => j.status === 'succeeded'),
        JSON.stringify(after.map((j) => [j.status, j.error])),
      );
      for (const [id, finishedAt] of before) assert.equal(after.find((j) => j.id === id)!.finishedAt, finishedAt, `job ${id} was not run again`);
      const stored = RewardsResponse.parse(store.requests(run.id)[0].response);

      // The trainer's retry of the lost request gets the answer the resumed server stored: the same rewards, no new jobs.
      const res = await fetch(`${second.url}/v1/rewards`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task, completions }),
      });
      assert.equal(res.status, 200);
      const again = RewardsResponse.parse(await res.json());
      assert.equal(again.replayed, true);
      assert.deepEqual(again.rewards, stored.rewards);
      assert.deepEqual(again.results, stored.results);
      assert.equal(store.jobs(run.id).length, after.length, 'the retry trained nothing');
      for (const r of again.results) assert.equal(JobResponse.parse(await (await fetch(`${second.url}/v1/jobs/${r.job}`)).json()).status, 'succeeded');
    } finally {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    }
  } finally {
    store.close();
  }
});

/** Reads an event stream to its end; the names of its events and the data of the last one. */
async function eventNames(url: string): Promise<{ names: string[]; last: unknown }> {
  const text = await (await fetch(url)).text();
  const blocks = text.split('\n\n').filter((b) => /^event: /m.test(b));
  const names = blocks.map((b) => /^event: (.*)$/m.exec(b)![1]);
  const data = blocks.length ? /^data: (.*)$/m.exec(blocks.at(-1)!)?.[1] : undefined;
  return { names, last: data === undefined ? null : JSON.parse(data) };
}

test('POST /v1/jobs across a restart: SIGTERM ends the event stream with `interrupted`; after --resume the same stream gives the rewards', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-serve-resume-jobs-'));
  const completions = [JSON.stringify(arsSpec(task, 5000, 51)), JSON.stringify(arsSpec(task, 5000, 52))];
  const first = await serve(['--run', dir]);
  const res = await fetch(`${first.url}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'restart-1' },
    body: JSON.stringify({ task, completions }),
  });
  assert.equal(res.status, 202);
  const accepted = (await res.json()) as { request: number; jobs: number[] };
  const stream = eventNames(`${first.url}/v1/requests/${accepted.request}/events`);
  await sleep(300); // the baseline (five seeds on one worker) is still training
  first.child.kill('SIGTERM');
  const cut = await stream;
  assert.equal(cut.names.at(-1), 'interrupted', `events: ${cut.names.join(', ')}`);
  await once(first.child, 'exit');

  const second = await serve(['--run', dir, '--resume']);
  try {
    const done = await eventNames(`${second.url}/v1/requests/${accepted.request}/events`);
    assert.equal(done.names.at(-1), 'rewards');
    const answer = RewardsResponse.parse(done.last);
    assert.equal(answer.rewards.length, 2);
    assert.ok(answer.rewards.every((r) => typeof r === 'number'));
    // The client's retry with its key is the same request, already done.
    const again = await fetch(`${second.url}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'restart-1' },
      body: JSON.stringify({ task, completions }),
    });
    const replay = (await again.json()) as { request: number; status: string; jobs: number[] };
    assert.deepEqual([replay.request, replay.status, replay.jobs], [accepted.request, 'done', accepted.jobs]);
  } finally {
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
  }
});

test('rrl serve refuses to listen beyond loopback without a token', async () => {
  const child = spawn(process.execPath, [bin, 'serve', '--host', '0.0.0.0', '--port', '0', '--run', mkdtempSync(join(tmpdir(), 'rrl-serve-host-'))], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  assert.notEqual(code, 0);
  assert.match(err, /beyond loopback: a bearer token is required/);
  const empty = spawn(process.execPath, [bin, 'serve', '--token-env', 'RRL_TEST_NO_SUCH_VAR', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RRL_TEST_NO_SUCH_VAR: '' },
  });
  let err2 = '';
  empty.stderr.on('data', (c: Buffer) => (err2 += c.toString()));
  assert.notEqual(((await once(empty, 'exit')) as [number])[0], 0);
  assert.match(err2, /RRL_TEST_NO_SUCH_VAR: the variable is empty or unset/);
});

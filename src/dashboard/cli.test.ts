import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeLargeRun } from '../testing/large-run.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-dash-cli-'));
writeLargeRun(join(tmp, 'runs', 'one'), { iterations: 2, group: 2, tasks: ['cartpole-short'] });

function rrl(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: tmp, env: { ...process.env, ...env }, timeout: 300_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('rrl dashboard refuses what it cannot serve, naming it', () => {
  const missing = rrl(['dashboard', join(tmp, 'no-such-dir')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no-such-dir: no such directory/);
  const open = rrl(['dashboard', 'runs', '--host', '0.0.0.0', '--port', '0']);
  assert.equal(open.code, 1);
  assert.match(open.stderr, /--host 0\.0\.0\.0 is beyond loopback: a bearer token is required/);
  const empty = rrl(['dashboard', 'runs', '--token-env', 'RRL_NO_SUCH_TOKEN_VAR']);
  assert.equal(empty.code, 1);
  assert.match(empty.stderr, /--token-env RRL_NO_SUCH_TOKEN_VAR: the variable is empty or unset/);
  assert.match(rrl(['dashboard', '--port', '70000']).stderr, /--port must be an integer in \[0, 65535\]/);
});

test('rrl dashboard on a port already taken says so and exits', async () => {
  const { createServer } = await import('node:net');
  const taken = createServer();
  await new Promise<void>((res) => taken.listen(0, '127.0.0.1', res));
  try {
    const port = String((taken.address() as { port: number }).port);
    const r = await new Promise<{ code: number | null; stderr: string }>((res) => {
      const child = spawn(process.execPath, [bin, 'dashboard', 'runs', '--port', port], { cwd: tmp });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('exit', (code) => res({ code, stderr }));
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /EADDRINUSE/);
  } finally {
    taken.close();
  }
});

test('rrl dashboard serves the runs under ./runs by default and stops on SIGTERM', async () => {
  const child = spawn(process.execPath, [bin, 'dashboard', '--port', '0'], { cwd: tmp });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = await new Promise<string>((res, rej) => {
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      const m = /dashboard on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (m) res(m[1]);
    });
    child.once('exit', (code) => rej(new Error(`exited ${code}: ${stderr}`)));
  });
  try {
    const runs = (await (await fetch(`${url}/api/runs`)).json()) as { key: string }[];
    assert.deepEqual(
      runs.map((r) => r.key),
      ['one'],
    );
    assert.match(stderr, /1 run\(s\) under runs; read-only/);
  } finally {
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});

test('rrl export tensorboard writes one event file per TensorBoard run; a missing run is named', () => {
  const out = join(tmp, 'tb');
  const r = rrl(['export', 'tensorboard', join(tmp, 'runs', 'one'), '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /\d+ scalar\(s\) in \d+ event file\(s\) under .*tb; view with: tensorboard --logdir/);
  assert.ok(existsSync(join(out, 'run')) && existsSync(join(out, 'tasks', 'cartpole-short')));
  assert.equal(readdirSync(join(out, 'jobs')).length, 1 + 2 * 2);
  for (const d of ['run', join('tasks', 'cartpole-short')]) assert.match(readdirSync(join(out, d))[0], /^events\.out\.tfevents\.\d+\./);
  const none = rrl(['export', 'tensorboard', join(tmp, 'nothing'), '--out', out]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no run in .*nothing: store\.db not found/);
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getPublicTask } from '../tasks/briefs.js';
import { arsSpec } from '../testing/specs.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');

function exec(...args: string[]) {
  return spawnSync(process.execPath, [bin, 'job', 'exec', ...args], { encoding: 'utf8' });
}

test('rrl job exec trains a spec from files and writes the artifact, without a score', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-exec-'));
  writeFileSync(join(dir, 'spec.in.json'), JSON.stringify(arsSpec('cartpole-balance', 2000)));
  writeFileSync(join(dir, 'brief.in.json'), JSON.stringify(getPublicTask('cartpole-balance').brief));
  const out = join(dir, 'job');
  const r = exec('--spec', join(dir, 'spec.in.json'), '--brief', join(dir, 'brief.in.json'), '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /done: .*artifact in/);
  for (const f of ['spec.json', 'policy.json', 'curve.jsonl', 'cost.json', 'status.json']) assert.ok(existsSync(join(out, f)), f);
  assert.equal(JSON.parse(readFileSync(join(out, 'status.json'), 'utf8')).status, 'succeeded');
  assert.doesNotMatch(r.stdout + r.stderr, /score|normali[sz]ed/i);
});

test('rrl job exec: a bad spec is a recorded failure (exit 1), missing arguments exit 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-exec-'));
  writeFileSync(join(dir, 'spec.json'), JSON.stringify({ ...arsSpec('cartpole-balance'), seed: -1 }));
  writeFileSync(join(dir, 'brief.json'), JSON.stringify(getPublicTask('cartpole-balance').brief));
  const r = exec('--spec', join(dir, 'spec.json'), '--brief', join(dir, 'brief.json'), '--out', join(dir, 'job'));
  assert.equal(r.status, 1);
  const status = JSON.parse(readFileSync(join(dir, 'job', 'status.json'), 'utf8'));
  assert.equal(status.status, 'failed');
  assert.equal(status.kind, 'invalid');
  assert.match(status.error, /seed/);
  const m = exec('--spec', join(dir, 'spec.json'));
  assert.equal(m.status, 2);
  assert.match(m.stderr, /missing --brief, --out/);
});

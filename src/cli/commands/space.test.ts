import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getPublicTask } from '../../tasks/briefs.js';
import { HEAD_NAMES, describeSpace } from '../../outer/agents/space.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../../bin/rrl.js');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-space-cli-'));
const rrl = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: tmp });

test("rrl space --task prints the task's design space; --out writes it; without --task, every task's and the slots", () => {
  const one = rrl('space', '--task', 'cartpole-balance');
  assert.equal(one.status, 0, one.stderr);
  const { brief, baseline } = getPublicTask('cartpole-balance');
  assert.deepEqual(JSON.parse(one.stdout), JSON.parse(JSON.stringify(describeSpace(brief, baseline))));
  const file = join(tmp, 'space.json');
  assert.equal(rrl('space', '--task', 'cartpole-balance', '--out', file).status, 0);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), JSON.parse(one.stdout));
  const all = rrl('space');
  assert.equal(all.status, 0, all.stderr);
  const parsed = JSON.parse(all.stdout) as { slots: string[]; tasks: { task: string }[] };
  assert.deepEqual(parsed.slots, HEAD_NAMES);
  assert.ok(parsed.tasks.some((t) => t.task === 'two-moons'));
  const unknown = rrl('space', '--task', 'no-such-task');
  assert.notEqual(unknown.status, 0);
  assert.match(unknown.stderr, /no-such-task/);
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const args = [
  'train',
  '--tasks',
  'cartpole-short',
  '--agent',
  'controller',
  '--iterations',
  '2',
  '--group',
  '3',
  '--seed',
  '5',
  '--workers',
  '2',
  '--fidelity',
  'asha',
  '--eta',
  '3',
  '--min-share',
  '1/3',
  '--json',
];

interface Row {
  id: number;
  kind: string;
  round: number;
  slot: number;
  rung: number | null;
  parent_id: number | null;
  status: string;
  finished_at: string | null;
  spec: string;
  raw: number | null;
  reward: number | null;
}

function rows(dir: string): Row[] {
  const db = new Database(join(dir, 'store.db'), { readonly: true });
  try {
    return db
      .prepare(
        `SELECT j.id, j.kind, j.round, j.slot, j.rung, j.parent_id, j.status, j.finished_at, j.spec, s.raw, r.reward
           FROM jobs j LEFT JOIN scores s ON s.job_id = j.id LEFT JOIN rewards r ON r.job_id = j.id ORDER BY j.id`,
      )
      .all() as Row[];
  } finally {
    db.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a run with successive halving killed with SIGKILL resumes without losing or rerunning finished rung jobs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-fresume-'));
  const child = spawn(process.execPath, [bin, ...args, '--run', dir], { stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  // Kill once some rung jobs have finished, before the run is over (they train beside the baseline's 5 seeds: allow minutes).
  let before: Row[] = [];
  for (let i = 0; i < 6000; i++) {
    await sleep(50);
    try {
      before = rows(dir);
    } catch {
      continue;
    }
    if (before.filter((r) => r.kind === 'rung' && r.status !== 'pending').length >= 2) break;
  }
  child.kill('SIGKILL');
  await exited;
  before = rows(dir);
  const finished = before.filter((r) => r.status !== 'pending');
  assert.ok(finished.filter((r) => r.kind === 'rung').length >= 2, 'rung jobs had finished before the kill');
  assert.ok(before.some((r) => r.status === 'pending') || before.filter((r) => r.kind === 'proposal').length < 6, 'the kill interrupted the run');

  const out = execFileSync(process.execPath, [bin, 'train', '--resume', dir, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const summary = JSON.parse(out.trim().split('\n').at(-1)!);
  assert.equal(summary.iterations.length, 2);
  assert.equal(summary.fidelity.mode, 'asha');
  const after = rows(dir);
  for (const f of finished) {
    const a = after.find((r) => r.id === f.id)!;
    assert.equal(a.finished_at, f.finished_at, `job ${f.id} (${f.kind}) was not rerun`);
    assert.equal(a.raw, f.raw);
  }
  assert.ok(after.every((r) => r.status !== 'pending'));
  // Per iteration: 3 proposals, 3 rung-0 jobs (1/3 of the budget) and 1 at the full budget, no duplicates.
  for (const it of [0, 1]) {
    const rungs = after.filter((r) => r.kind === 'rung' && r.round === it);
    assert.equal(after.filter((r) => r.kind === 'proposal' && r.round === it).length, 3);
    assert.deepEqual(
      rungs.map((r) => r.rung),
      [0, 0, 0, 1],
    );
  }

  // Resuming reproduces the uninterrupted run: same proposals, rungs, results and rewards.
  const clean = mkdtempSync(join(tmpdir(), 'rrl-fclean-'));
  execFileSync(process.execPath, [bin, ...args, '--run', clean], { stdio: 'ignore' });
  const ref = rows(clean);
  const key = (r: Row) => [r.kind, r.round, r.slot, r.rung, r.parent_id, r.spec, r.raw, r.reward];
  assert.deepEqual(after.map(key), ref.map(key));
});

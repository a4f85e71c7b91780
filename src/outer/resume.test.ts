import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const args = ['train', '--tasks', 'cartpole-short', '--agent', 'controller', '--iterations', '3', '--group', '4', '--seed', '5', '--workers', '2', '--json'];

interface Row {
  id: number;
  kind: string;
  round: number;
  slot: number;
  status: string;
  finished_at: string | null;
  spec: string;
  raw: number | null;
}

function rows(dir: string): Row[] {
  const db = new Database(join(dir, 'store.db'), { readonly: true });
  try {
    return db
      .prepare('SELECT j.id, j.kind, j.round, j.slot, j.status, j.finished_at, j.spec, s.raw FROM jobs j LEFT JOIN scores s ON s.job_id = j.id ORDER BY j.id')
      .all() as Row[];
  } finally {
    db.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a run killed with SIGKILL resumes without losing or rerunning finished jobs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-resume-'));
  const child = spawn(process.execPath, [bin, ...args, '--run', dir], { stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  // Wait until some proposal (not only the baseline's 5 seeds) has finished, then kill mid-run.
  let before: Row[] = [];
  for (let i = 0; i < 3000; i++) {
    await sleep(100);
    try {
      before = rows(dir);
    } catch {
      continue;
    }
    if (before.filter((r) => r.kind === 'proposal' && r.status !== 'pending').length >= 2) break;
  }
  child.kill('SIGKILL');
  await exited;
  before = rows(dir);
  const finished = before.filter((r) => r.status !== 'pending');
  assert.ok(finished.length >= 2, 'jobs had finished before the kill');
  assert.ok(before.filter((r) => r.kind === 'proposal').length < 12 || before.some((r) => r.status === 'pending'), 'the kill interrupted the run');

  const out = execFileSync(process.execPath, [bin, 'train', '--resume', dir, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const summary = JSON.parse(out.trim().split('\n').at(-1)!);
  assert.equal(summary.iterations.length, 3);
  assert.equal(summary.jobs, 12);
  const after = rows(dir);
  const count = (kind: string): number => after.filter((r) => r.kind === kind).length;
  assert.equal(count('baseline'), 5, 'the baseline on its 5 harness seeds, no duplicates');
  assert.equal(count('proposal'), 12, '12 proposals, no duplicates');
  assert.equal(new Set(after.map((r) => `${r.kind}/${r.round}/${r.slot}`)).size, after.length, 'no job twice');
  for (const f of finished) {
    const a = after.find((r) => r.id === f.id)!;
    assert.equal(a.finished_at, f.finished_at, `job ${f.id} was not rerun`);
    assert.equal(a.raw, f.raw);
  }
  assert.ok(after.every((r) => r.status !== 'pending'));

  // Resuming reproduces the uninterrupted run: same proposals (agent checkpoint) and same results.
  const clean = mkdtempSync(join(tmpdir(), 'rrl-clean-'));
  execFileSync(process.execPath, [bin, ...args, '--run', clean], { stdio: 'ignore' });
  const ref = rows(clean);
  assert.deepEqual(
    after.map((r) => [r.kind, r.round, r.slot, r.spec, r.raw]),
    ref.map((r) => [r.kind, r.round, r.slot, r.spec, r.raw]),
  );
});

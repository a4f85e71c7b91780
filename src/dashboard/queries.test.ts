import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SCHEMA } from '../store/schema.js';
import { Store } from '../store/store.js';
import { openReadOnly } from './catalog.js';
import { jobDetail, jobList, runDetail } from './queries.js';

/** A store with two proposals in round 1, written with the jobs' round column named `column`. */
function storeWith(column: 'round' | 'iteration'): string {
  const dir = mkdtempSync(join(tmpdir(), `rrl-queries-${column}-`));
  const db = new Database(join(dir, 'store.db'));
  db.exec(SCHEMA.replaceAll('round', column));
  db.exec(`INSERT INTO runs (id, created_at, config, status) VALUES ('r', '2026-01-01', '{}', 'running');
    INSERT INTO jobs (run_id, ${column}, slot, task, kind, agent, spec, status, created_at)
      VALUES ('r', 1, 0, 't', 'proposal', 'random', '{}', 'succeeded', '2026-01-01'), ('r', 1, 1, 't', 'proposal', 'random', '{}', 'pending', '2026-01-01');
    INSERT INTO scores (job_id, raw, normalized, scored_at) VALUES (1, 1, 0.5, '2026-01-01');`);
  db.close();
  return dir;
}

test("the dashboard reads a job's round as its iteration, from a store with the round column and, read-only, from one before it", () => {
  for (const column of ['round', 'iteration'] as const) {
    const db = openReadOnly(storeWith(column));
    const list = jobList(db, { iteration: 1 });
    assert.deepEqual(
      list.rows.map((r) => [r.id, r.iteration]),
      [
        [1, 1],
        [2, 1],
      ],
      column,
    );
    assert.deepEqual(list.options.iterations, [1]);
    assert.deepEqual(jobList(db, { iteration: 0 }).rows, []);
    assert.equal(jobDetail(db, 2)?.job.iteration, 1);
    assert.deepEqual(
      runDetail(db)?.iterations.map((i) => [i.iteration, i.jobs]),
      [[1, 2]],
    );
    db.close();
  }
});

test('a watched store from before the round column is read again once a writer renames it', () => {
  const dir = storeWith('iteration');
  const db = openReadOnly(dir);
  assert.equal(jobList(db).rows.length, 2);
  new Store(dir).close();
  assert.deepEqual(
    jobList(db).rows.map((r) => r.iteration),
    [1, 1],
  );
  db.close();
});

import type Database from 'better-sqlite3';

/** Adds the columns that stores written by earlier versions lack. */
export function migrate(db: Database.Database): void {
  const has = (table: string, column: string): boolean =>
    (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((c) => c.name === column);
  if (!has('rewards', 'group_id')) db.exec('ALTER TABLE rewards ADD COLUMN group_id TEXT');
  if (!has('scores', 'stderr')) db.exec('ALTER TABLE scores ADD COLUMN stderr REAL');
  if (!has('runs', 'eval_identity')) db.exec('ALTER TABLE runs ADD COLUMN eval_identity TEXT');
  // Successive halving (outer/fidelity.ts): rung jobs and the share a result stands for.
  if (!has('jobs', 'rung')) db.exec('ALTER TABLE jobs ADD COLUMN rung INTEGER');
  if (!has('jobs', 'parent_id')) db.exec('ALTER TABLE jobs ADD COLUMN parent_id INTEGER');
  if (!has('jobs', 'share')) db.exec('ALTER TABLE jobs ADD COLUMN share REAL');
  // The patch form of an answer (outer/answer.ts): the merge patch as written.
  if (!has('jobs', 'patch')) db.exec('ALTER TABLE jobs ADD COLUMN patch TEXT');
  // Idempotent requests of `rrl serve`: the client's key and the digest of task and completions.
  if (!has('requests', 'idem_key')) db.exec('ALTER TABLE requests ADD COLUMN idem_key TEXT');
  if (!has('requests', 'digest')) db.exec('ALTER TABLE requests ADD COLUMN digest TEXT');
  // Who produced a reused result (store/cache.ts): `cached` shows only hits on agents' jobs.
  if (!has('jobs', 'cache_origin')) db.exec('ALTER TABLE jobs ADD COLUMN cache_origin TEXT');
  // A job's round is an iteration of `rrl train` or a request of `rrl serve`: the column says both.
  if (has('jobs', 'iteration') && !has('jobs', 'round')) db.exec('ALTER TABLE jobs RENAME COLUMN iteration TO round');
}

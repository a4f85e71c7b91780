/**
 * The store's SQLite schema: every table and index, created if missing (later columns are added,
 * and renamed ones renamed, by store/migrate.ts; later tables, such as the episodes of `rrl serve`,
 * are created here in stores written before them). A job's `round` is the iteration of `rrl train`
 * that proposed it, or the request of `rrl serve` it belongs to.
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  config TEXT NOT NULL,
  status TEXT NOT NULL,
  finished_at TEXT,
  eval_identity TEXT
);
CREATE TABLE IF NOT EXISTS iterations (
  run_id TEXT NOT NULL REFERENCES runs(id),
  idx INTEGER NOT NULL,
  status TEXT NOT NULL,
  mean_reward REAL,
  mean_normalized REAL,
  best_normalized REAL,
  update_stats TEXT,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL REFERENCES runs(id),
  round INTEGER NOT NULL,
  slot INTEGER NOT NULL,
  task TEXT NOT NULL,
  kind TEXT NOT NULL,
  agent TEXT NOT NULL,
  spec TEXT NOT NULL,
  trace TEXT,
  status TEXT NOT NULL,
  failure_kind TEXT,
  error TEXT,
  env_steps INTEGER,
  examples INTEGER,
  wall_seconds REAL,
  cpu_seconds REAL,
  artifact_dir TEXT,
  cache_hit TEXT,
  cache_origin TEXT,
  rung INTEGER,
  parent_id INTEGER,
  share REAL,
  patch TEXT,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  UNIQUE (run_id, kind, round, task, slot)
);
CREATE TABLE IF NOT EXISTS scores (
  job_id INTEGER PRIMARY KEY REFERENCES jobs(id),
  raw REAL NOT NULL,
  normalized REAL NOT NULL,
  stderr REAL,
  scored_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rewards (
  job_id INTEGER PRIMARY KEY REFERENCES jobs(id),
  reward REAL NOT NULL,
  advantage REAL,
  detail TEXT,
  group_id TEXT
);
CREATE TABLE IF NOT EXISTS checkpoints (
  run_id TEXT NOT NULL REFERENCES runs(id),
  iteration INTEGER NOT NULL,
  agent TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, iteration)
);
CREATE TABLE IF NOT EXISTS curves (
  job_id INTEGER NOT NULL REFERENCES jobs(id),
  name TEXT NOT NULL,
  step INTEGER NOT NULL,
  wall_time REAL NOT NULL,
  value REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS curves_job ON curves(job_id, name);
CREATE TABLE IF NOT EXISTS task_fingerprints (
  run_id TEXT NOT NULL REFERENCES runs(id),
  task TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  detail TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, task)
);
CREATE TABLE IF NOT EXISTS requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL REFERENCES runs(id),
  task TEXT NOT NULL,
  completions INTEGER NOT NULL,
  status TEXT NOT NULL,
  response TEXT,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  idem_key TEXT,
  digest TEXT
);
CREATE TABLE IF NOT EXISTS episodes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL REFERENCES runs(id),
  task TEXT NOT NULL,
  max_submissions INTEGER NOT NULL,
  status TEXT NOT NULL,
  idem_key TEXT,
  reward REAL,
  reason TEXT,
  answer TEXT,
  created_at TEXT NOT NULL,
  closed_at TEXT
);
CREATE INDEX IF NOT EXISTS episodes_key ON episodes(run_id, idem_key);
CREATE TABLE IF NOT EXISTS episode_submissions (
  episode_id INTEGER NOT NULL REFERENCES episodes(id),
  idx INTEGER NOT NULL,
  request_id INTEGER NOT NULL REFERENCES requests(id),
  idem_key TEXT,
  feedback TEXT,
  PRIMARY KEY (episode_id, idx)
);
`;

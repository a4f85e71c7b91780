/**
 * The runs a dashboard shows: every `store.db` named on the command line or found under a named
 * directory, and the transfer experiments (a directory with `transfer.json`) found there. Each run
 * gets a short key for URLs; a URL only ever names a key, never a path, so nothing a client sends
 * reaches the file system.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import Database from 'better-sqlite3';

/** One run store the dashboard reads. */
export interface RunEntry {
  /** The run's key in URLs: letters, digits, `.`, `_`, `-`. */
  key: string;
  /** The run directory (holds `store.db`). */
  dir: string;
}

/** What a run key may look like. */
export const KEY_PATTERN = /^[A-Za-z0-9._-]{1,120}$/;

/** Directories never searched for runs: job artifacts, dependencies, hidden folders. */
const SKIP = new Set(['jobs', 'node_modules', 'adapters']);

/** How deep below a named directory runs are looked for. */
const MAX_DEPTH = 3;

/** The file that marks a transfer experiment's directory (`rrl experiment transfer`). */
export const EXPERIMENT_FILE = 'transfer.json';

/** The run directories at or under `root` (a directory holding `store.db` is a run; its insides are not searched). */
export function findRunDirs(root: string, depth = 0): string[] {
  return scan(root, depth).runs;
}

/** Runs and transfer experiments at or under `root`; an experiment's own runs are listed too. */
export function scan(root: string, depth = 0): { runs: string[]; experiments: string[] } {
  if (existsSync(join(root, 'store.db'))) return { runs: [root], experiments: [] };
  const here = existsSync(join(root, EXPERIMENT_FILE)) ? [root] : [];
  if (depth >= MAX_DEPTH) return { runs: [], experiments: here };
  let names: string[];
  try {
    names = readdirSync(root).sort();
  } catch {
    return { runs: [], experiments: here };
  }
  const out = { runs: [] as string[], experiments: here };
  for (const name of names) {
    if (name.startsWith('.') || SKIP.has(name)) continue;
    const path = join(root, name);
    try {
      if (!statSync(path).isDirectory()) continue;
    } catch {
      continue;
    }
    const inner = scan(path, depth + 1);
    out.runs.push(...inner.runs);
    out.experiments.push(...inner.experiments);
  }
  return out;
}

/** A URL-safe key for a run directory, relative to the directory it was found under. */
function keyFor(root: string, dir: string): string {
  const rel =
    dir === root
      ? basename(dir)
      : dir
          .slice(root.length + 1)
          .split(/[\\/]+/)
          .join('.');
  const key = rel
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[.]+/, '_')
    .slice(0, 100);
  return key || 'run';
}

/** The runs under the command line's arguments; `refresh()` picks up runs created since. */
export class RunCatalog {
  private readonly roots: string[];
  private readonly byKey = new Map<string, RunEntry>();
  private readonly byDir = new Map<string, RunEntry>();
  private readonly experimentsByKey = new Map<string, RunEntry>();
  private readonly experimentDirs = new Set<string>();

  /** Throws naming the argument when one is neither a directory nor a run store. */
  constructor(args: string[]) {
    this.roots = args.map((a) => {
      const root = resolve(a);
      let dir = root;
      if (basename(root) === 'store.db' && existsSync(root)) dir = resolve(root, '..');
      if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`${a}: no such directory (give run directories, or directories that hold runs)`);
      return dir;
    });
    this.refresh();
  }

  /** Looks for new runs; returns true when one was added. */
  refresh(): boolean {
    let added = false;
    for (const root of this.roots) {
      const found = scan(root);
      for (const dir of found.runs) {
        if (this.byDir.has(dir)) continue;
        let key = keyFor(root, dir);
        for (let n = 2; this.byKey.has(key); n++) key = `${keyFor(root, dir)}-${n}`;
        const entry = { key, dir };
        this.byKey.set(key, entry);
        this.byDir.set(dir, entry);
        added = true;
      }
      for (const dir of found.experiments) {
        if (this.experimentDirs.has(dir)) continue;
        let key = keyFor(root, dir);
        for (let n = 2; this.experimentsByKey.has(key); n++) key = `${keyFor(root, dir)}-${n}`;
        this.experimentsByKey.set(key, { key, dir });
        this.experimentDirs.add(dir);
        added = true;
      }
    }
    return added;
  }

  /** Every transfer experiment found. */
  experiments(): RunEntry[] {
    return [...this.experimentsByKey.values()];
  }

  /** The experiment with this key, if any. */
  experiment(key: string): RunEntry | undefined {
    return this.experimentsByKey.get(key);
  }

  /** Every run found, in the order found. */
  list(): RunEntry[] {
    return [...this.byKey.values()];
  }

  /** The run with this key, if any. */
  get(key: string): RunEntry | undefined {
    return this.byKey.get(key);
  }
}

/** Opens a run's store read-only (a WAL reader beside the writer); never creates or changes it. */
export function openReadOnly(dir: string): Database.Database {
  const db = new Database(join(dir, 'store.db'), { readonly: true, fileMustExist: true, timeout: 2000 });
  db.pragma('query_only = ON');
  return db;
}

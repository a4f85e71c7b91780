/** The dashboard's read-only connections to run stores, and its lookups of runs and experiments by key (dashboard/server.ts). */
import type Database from 'better-sqlite3';
import { HttpError } from '../serve/http.js';
import { type RunCatalog, openReadOnly } from './catalog.js';

/** The read-only connections to the runs' stores, opened on first use, and the experiments, each found by key. */
export class RunStores {
  private readonly catalog: RunCatalog;
  private readonly connections = new Map<string, Database.Database>();

  constructor(catalog: RunCatalog) {
    this.catalog = catalog;
  }

  /** The open read-only connection to a run's store (opened on first use); null while it cannot be opened. */
  db(key: string): Database.Database | null {
    let c = this.connections.get(key);
    if (!c) {
      const entry = this.catalog.get(key);
      if (!entry) return null;
      try {
        c = openReadOnly(entry.dir);
      } catch {
        return null;
      }
      this.connections.set(key, c);
    }
    return c;
  }

  /** The connection to a run's store: 404 for a run not found even after a fresh look, 503 while its store cannot be opened. */
  dbOrThrow(key: string): Database.Database {
    if (!this.catalog.get(key)) {
      this.catalog.refresh();
      if (!this.catalog.get(key)) throw new HttpError(404, `no run "${key}" here; see /api/runs`);
    }
    const c = this.db(key);
    if (!c) throw new HttpError(503, `the store of run "${key}" cannot be opened yet`);
    return c;
  }

  /** An experiment by key, looked for afresh when unknown; 404 when not found. */
  experimentOrThrow(key: string): { key: string; dir: string } {
    let entry = this.catalog.experiment(key);
    if (!entry) {
      this.catalog.refresh();
      entry = this.catalog.experiment(key);
    }
    if (!entry) throw new HttpError(404, `no experiment "${key}" here; see /api/experiments`);
    return entry;
  }

  /** Closes every connection. */
  close(): void {
    for (const c of this.connections.values()) c.close();
    this.connections.clear();
  }
}

/**
 * Opening a serve run: its store and run (new, or resumed with its generated tasks and pinned
 * task files), its cache, scorer and shared evaluation step, and the signal that stops them.
 */
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { Executor } from '../run/executor.js';
import { Store } from '../store/store.js';
import { ResultCache } from '../store/cache.js';
import { listTasks } from '../tasks/briefs.js';
import { registerFamilyTasks } from '../tasks/families/index.js';
import { Scorer } from '../outer/scoring/scorer-pool.js';
import { JobPipeline } from '../outer/pipeline.js';
import { openRun } from '../outer/open-run.js';
import { pinTaskFingerprints } from '../outer/fingerprints.js';
import type { ServeConfig, ServiceOptions } from './service-types.js';

/** What a service is made of: its run, the parts that train and score, how it stops, its options. */
export interface ServiceParts {
  dir: string;
  runId: string;
  config: ServeConfig;
  store: Store;
  cache: ResultCache | null;
  scorer: Scorer;
  executor: Executor;
  pipeline: JobPipeline;
  abort: AbortController;
  options: ServiceOptions;
  secret: string;
}

/**
 * Opens the serve run in `dir` (a new one from `config`, or the stored one when `config` is
 * null) with the parts a service is made of; closes what it opened when it throws.
 */
export function openServiceRun(dir: string, config: ServeConfig | null, executor: Executor, options: ServiceOptions): ServiceParts {
  const log = options.log ?? (() => {});
  const store = new Store(dir);
  let cache: ResultCache | null = null;
  try {
    const existing = store.getRun();
    if (existing && config) throw new Error(`${dir} already holds a run; continue it with --resume`);
    const { runId, config: stored, secret, evalId } = openRun(store, dir, config, log);
    if ((stored as { mode?: string }).mode !== 'serve') throw new Error(`the run in ${dir} is a training run, not a serve run`);
    // Generated tasks of the run (`rrl serve --family`), new or resumed: registered before anything looks a task up.
    for (const d of (stored as ServeConfig).families ?? []) registerFamilyTasks(d.family, d.count, d.seed);
    pinTaskFingerprints(
      store,
      runId,
      listTasks().map((t) => t.brief.id),
    ); // a resumed run refuses tasks whose files changed
    store.setRunStatus(runId, 'running');
    cache = options.cache === null ? null : new ResultCache(options.cache ?? join(dir, 'store.db'));
    const scorer = new Scorer(options.scoring);
    const abort = new AbortController();
    // Every job in flight listens to it; a queue of thousands is normal. (Not 0, "unlimited": Node 20's
    // getMaxListeners throws on an AbortSignal set so, and the worker pool reads it.)
    setMaxListeners(1 << 20, abort.signal);
    const pipeline = new JobPipeline({ dir, runId, store, executor, scorer, cache, secret, evalId, signal: abort.signal, timeoutMs: options.timeoutMs, log });
    return { dir, runId, config: stored as ServeConfig, store, cache, scorer, executor, pipeline, abort, options, secret };
  } catch (err) {
    cache?.close();
    store.close();
    throw err;
  }
}

/**
 * Opening a run: the run a store holds, created from the configuration when there is none, and
 * the evaluation secret that scores it (a run scored under another secret is refused). Shared
 * by `rrl train` (outer/loop.ts) and `rrl serve` (serve/service.ts).
 */
import type { Store } from '../store/store.js';
import { derivedEvalSecret, evalIdentity, evalSecret, withEvalSecret } from '../tasks/secret.js';

/** The run a store holds (created from `config` when there is none) and the secret that scores it. */
export interface OpenedRun {
  runId: string;
  config: unknown;
  secret: string;
  evalId: string;
}

/** One evaluation secret of an experiment: its index (0: the installation's), its identity, and a way to run under it. */
export interface ExperimentSecret {
  index: number;
  evalId: string;
  /** Runs `fn` with this thread's runs scored under this secret (`withEvalSecret`); the secret itself never leaves here. */
  run<T>(fn: () => Promise<T>): Promise<T>;
}

/**
 * The `n` evaluation secrets an experiment repeats itself under: the installation's first, then
 * `n − 1` derived from it (`derivedEvalSecret`). Runs opened inside `run` record and use that secret.
 */
export function experimentSecrets(n: number): ExperimentSecret[] {
  return Array.from({ length: n }, (_, index) => {
    const secret = derivedEvalSecret(index);
    return { index, evalId: evalIdentity(secret), run: <T>(fn: () => Promise<T>) => withEvalSecret(secret, fn) };
  });
}

/**
 * Opens the run in `store`, creating it from `config` with id `run-<time>-<seedhex>` when the
 * store has none. A run scored under another evaluation secret is refused (its scores would
 * not compare); a run that recorded none continues under the current one.
 */
export function openRun(store: Store, dir: string, config: (object & { seed?: number }) | null, emit: (message: string) => void): OpenedRun {
  const secret = evalSecret();
  const evalId = evalIdentity(secret);
  let run = store.getRun();
  if (!run) {
    if (!config) throw new Error(`no run to resume in ${dir} (store.db has no run)`);
    const id = `run-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${((config.seed ?? 0) >>> 0).toString(16)}`;
    store.createRun(id, config, evalId);
    run = store.getRun()!;
  } else {
    if (config && JSON.stringify(config) !== JSON.stringify(run.config)) {
      emit('resuming with the configuration stored in the run (flags that differ are ignored)');
    }
    if (run.evalIdentity && run.evalIdentity !== evalId) {
      throw new Error(
        `this run was scored with evaluation secret ${run.evalIdentity} but the current secret is ${evalId}; ` +
          "resume with the run's secret (RRL_EVAL_SECRET or RRL_EVAL_SECRET_FILE)",
      );
    }
    if (!run.evalIdentity) {
      store.setEvalIdentity(run.id, evalId);
      emit(`this run recorded no evaluation secret; it continues under ${evalId}`);
    }
  }
  return { runId: run.id, config: run.config, secret, evalId };
}

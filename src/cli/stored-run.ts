/** What a run directory's store recorded about its run, for commands that resume it. */
import type { TrainConfig } from '../outer/loop.js';
import { Store } from '../store/store.js';

/**
 * The stored configuration of the run in `dir` (undefined when there is none); a serve run's
 * holds its `executor` and `families` under the same names.
 */
export function storedConfig(dir: string): TrainConfig | undefined {
  const store = new Store(dir);
  try {
    return store.getRun()?.config as TrainConfig | undefined;
  } finally {
    store.close();
  }
}

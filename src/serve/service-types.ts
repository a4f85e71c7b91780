/**
 * The types of `rrl serve`'s service (serve/service.ts): its stored configuration, its options
 * and the events its request streams follow.
 */
import type { CorpusSelection } from '../tasks/corpus/register.js';
import type { ExecutorConfig } from '../run/config.js';
import type { RewardRuleName } from '../outer/reward.js';
import type { FamilyDraw } from '../tasks/families/index.js';
import type { ScorerOptions } from '../outer/scoring/scorer-pool.js';

/** What the service tells listeners: a job of a request finished, a request was settled, the service stopped. */
export interface ServiceEvents {
  job: [request: number, job: number];
  done: [request: number];
  /** The harness failed on the request for a reason of its own (a bug): it stays pending for --resume. */
  failed: [request: number, message: string];
  interrupted: [];
}

/** A serve run's configuration, stored with the run and reused on resume. */
export interface ServeConfig {
  mode: 'serve';
  seed: number;
  reward: { rule: RewardRuleName; lambda: number };
  /** Where jobs run (absent: local worker threads). */
  executor?: ExecutorConfig;
  /** Generated tasks served beside the built-in ones (`rrl serve --family`); registered again on resume. */
  families?: FamilyDraw[];
  /** Corpus tasks served beside the built-in ones (`rrl serve --corpus`); the command registers them, on resume too. */
  corpus?: CorpusSelection[];
}

/** The forms of `GET /v1/tasks/{id}/prompt`. */
export type PromptForm = 'full' | 'compact' | 'patch';

/** Options of the service. */
export interface ServiceOptions {
  /** Most jobs accepted and not yet finished; a request past it gets 429 (default 256). */
  maxQueue?: number;
  /** Result cache file (default: the run's store); null turns the cache off. */
  cache?: string | null;
  scoring?: ScorerOptions;
  /** Per-job time limit (default: from the task's cap). */
  timeoutMs?: number;
  /** Lines for the operator (stderr). */
  log?: (message: string) => void;
  /**
   * Seconds within which a request identical to an earlier one (same task, same completions in
   * the same order) and without an idempotency key is answered with the earlier answer (default
   * 600): a client's retry after a timeout gets the rewards it missed, not new ones.
   */
  replayWindowSeconds?: number;
  /** Completion bytes accepted per window, invalid ones included; past it 429 with Retry-After (default 16 MiB). */
  completionBytes?: number;
  /** The sliding window of `completionBytes` in ms (default 10 000). */
  completionWindowMs?: number;
}

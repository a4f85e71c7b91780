/**
 * The scorer: runs the hidden evaluation of artifacts in worker threads of its own on the
 * harness side (never in the job workers, never in the harness's event loop), each scoring
 * with a wall-clock limit and a heap limit. Every scorer error — a time limit, an exhausted
 * heap, an evaluation command that fails, an artifact that cannot be read — comes back as a
 * failure with a kind and a one-line reason; `score` never rejects.
 *
 * A scorer thread loads the user's task files itself, on its first scoring; each request carries
 * the harness's fingerprint of the task (tasks/fingerprint.ts) and the thread refuses to score
 * when its own differs (a file changed since the harness loaded it): another split is never
 * scored silently, the job fails with a `score-error` that names the file.
 */
import { availableParallelism } from 'node:os';
import { WorkerPool } from '../../run/pool.js';
import { evalSecret } from '../../tasks/secret.js';
import { registeredTaskDirs } from '../../tasks/file/register.js';
import { registeredFamilyDraws } from '../../tasks/families/index.js';
import { registeredCorpusDraws } from '../../tasks/corpus/register.js';
import { type TaskFingerprint, taskFingerprintDetail } from '../../tasks/fingerprint.js';
import type { Score } from './hidden-score.js';
import type { ScoreRequest } from './worker-entry.js';

/** How to build a scorer. */
export interface ScorerOptions {
  /** Worker threads (default: 2, or 1 on a one-core machine). */
  workers?: number;
  /** Wall-clock limit of one scoring in ms (default 120 000). */
  timeoutMs?: number;
  /** Heap limit of a scorer worker in MB (default 1024). */
  memoryMb?: number;
}

/** Defaults of the scoring limits. */
export const SCORER_DEFAULTS = { timeoutMs: 120_000, memoryMb: 1024 } as const;

/** Why a scoring failed, as recorded in the job's failure kind. */
export type ScoreFailureKind = 'score-timeout' | 'score-out-of-memory' | 'score-error';

/** The outcome of one scoring. */
export type ScoreResult =
  | { ok: true; score: Score; wallSeconds: number }
  | { ok: false; kind: ScoreFailureKind | 'cancelled'; error: string; wallSeconds: number };

/** A pool of scorer threads with per-scoring limits. */
export class Scorer {
  readonly timeoutMs: number;
  readonly memoryMb: number;
  private readonly pool: WorkerPool<ScoreRequest, Score>;

  /** Starts the pool (its workers load the hidden evaluation on first use). */
  constructor(options: ScorerOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? SCORER_DEFAULTS.timeoutMs;
    this.memoryMb = options.memoryMb ?? SCORER_DEFAULTS.memoryMb;
    this.pool = new WorkerPool<ScoreRequest, Score>({
      workerFile: new URL('./worker-entry.js', import.meta.url),
      workers: options.workers ?? Math.min(2, availableParallelism()),
      maxOldGenerationSizeMb: this.memoryMb,
    });
  }

  /**
   * Scores the artifact in `dir` on `taskId`'s hidden evaluation under `secret` (default: this
   * installation's), within `timeoutMs` (default: the scorer's limit).
   */
  async score(taskId: string, dir: string, options: { signal?: AbortSignal; secret?: string; timeoutMs?: number } = {}): Promise<ScoreResult> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    let secret: string;
    try {
      secret = options.secret ?? evalSecret();
    } catch (err) {
      return { ok: false, kind: 'score-error', error: `scoring: ${oneLine((err as Error).message)}`, wallSeconds: 0 };
    }
    // The user's task directories, the generated families and the corpus tasks go along: the scorer thread registers the same tasks,
    // and checks that they are the ones this thread loaded (the fingerprint).
    let fingerprint: TaskFingerprint | undefined;
    try {
      fingerprint = taskFingerprintDetail(taskId);
    } catch {
      // an unknown task: the scorer thread says so
    }
    const request = {
      taskId,
      dir,
      secret,
      timeoutMs,
      taskDirs: registeredTaskDirs(),
      families: registeredFamilyDraws(),
      corpus: registeredCorpusDraws(),
      fingerprint,
    };
    const out = await this.pool.run(request, { timeoutMs, signal: options.signal });
    if (out.ok) return { ok: true, score: out.value, wallSeconds: out.wallSeconds };
    if (out.kind === 'cancelled') return { ok: false, kind: 'cancelled', error: out.message, wallSeconds: out.wallSeconds };
    const kind: ScoreFailureKind = out.kind === 'timeout' ? 'score-timeout' : out.kind === 'out-of-memory' ? 'score-out-of-memory' : 'score-error';
    return { ok: false, kind, error: `scoring: ${oneLine(out.message)}`, wallSeconds: out.wallSeconds };
  }

  /** Stops the workers (scorings still running come back cancelled). */
  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The first line of a message, at most 300 characters. */
function oneLine(message: string): string {
  const line = message.split('\n')[0].trim();
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

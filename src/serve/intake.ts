/**
 * How `rrl serve` takes completions in, before any of them becomes a job:
 *
 * - a byte budget over a sliding window (`CompletionBudget`): every completion counts, invalid
 *   or not, so a flood of junk is refused with 429 and a Retry-After like a full queue;
 * - parsing off the event loop (`parseProposals`): one worker thread extracts and validates the
 *   specs of a request, so other clients are answered meanwhile; a failed worker makes the
 *   request's completions invalid with its reason, never a crash;
 * - the digest a request is matched by for replays (`requestDigest`);
 * - the stored trace (`traceOf`): a valid completion is kept whole, an invalid one cut to its
 *   first KiB with a note of what was dropped.
 */
import { createHash } from 'node:crypto';
import type { TaskBrief } from '../spec/brief.js';
import { oneLine } from '../spec/bounds.js';
import type { GuardedProposal } from '../outer/guard.js';
import { WorkerPool } from '../run/pool.js';
import type { IntakeRequest } from './intake-worker.js';

/** Defaults of the intake limits. */
export const INTAKE_DEFAULTS = {
  /** Completion bytes (UTF-8) accepted per window: two full request bodies. */
  completionBytes: 16 << 20,
  /** The sliding window of the budget (ms). */
  windowMs: 10_000,
  /** Time one request's parsing may take in the worker (ms). */
  parseTimeoutMs: 60_000,
  /** Characters of an invalid completion kept in its trace. */
  invalidTraceChars: 1024,
} as const;

/** The answer of a budget: admitted, or refused with a one-line reason and seconds to wait. */
export type Admission = { ok: true } | { ok: false; message: string; retryAfterSeconds: number };

/**
 * Completion bytes per sliding window. A request is admitted when its bytes fit in what the
 * window has left, or when the window is empty (so one request larger than the budget still
 * passes alone); an admitted request's bytes count for `windowMs`.
 */
export class CompletionBudget {
  private readonly spent: { at: number; bytes: number }[] = [];
  private used = 0;

  constructor(
    readonly bytes: number = INTAKE_DEFAULTS.completionBytes,
    readonly windowMs: number = INTAKE_DEFAULTS.windowMs,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(bytes > 0) || !(windowMs > 0)) throw new RangeError(`the completion budget needs positive bytes and window, got ${bytes} bytes per ${windowMs} ms`);
  }

  /** Admits (and counts) `completions`, or says how long to wait. */
  admit(completions: string[]): Admission {
    const t = this.now();
    while (this.spent.length && this.spent[0].at <= t - this.windowMs) this.used -= this.spent.shift()!.bytes;
    const n = completions.reduce((sum, c) => sum + Buffer.byteLength(c), 0);
    if (this.used > 0 && this.used + n > this.bytes) {
      // The wait until enough of the window's bytes have aged out.
      let freed = this.used;
      let until = t;
      for (const s of this.spent) {
        if (freed + n <= this.bytes) break;
        freed -= s.bytes;
        until = s.at + this.windowMs;
      }
      const wait = Math.max(1, Math.ceil((until - t) / 1000));
      return {
        ok: false,
        message:
          `too many completion bytes: ${this.used} of ${this.bytes} taken in the last ${this.windowMs / 1000} s, ` +
          `this request has ${n}; retry in ${wait} s`,
        retryAfterSeconds: wait,
      };
    }
    this.spent.push({ at: t, bytes: n });
    this.used += n;
    return { ok: true };
  }
}

let pool: WorkerPool<IntakeRequest, GuardedProposal[]> | null = null;
let parsing = 0;

/** The parsing thread, started on first use (its idle thread does not keep the process alive). */
function intakePool(): WorkerPool<IntakeRequest, GuardedProposal[]> {
  pool ??= new WorkerPool({ workerFile: new URL('./intake-worker.js', import.meta.url), workers: 1, maxOldGenerationSizeMb: 512 });
  return pool;
}

/** Starts the parsing thread and has it load its modules, so the first request does not wait for them. */
export function warmIntake(): void {
  void intakePool().run({ completions: [], brief: null });
}

/** Requests being parsed right now (in this process). */
export function requestsParsing(): number {
  return parsing;
}

/**
 * The proposals of `completions` for the task of `brief`, parsed (a patch over `baseline`, the
 * task's baseline spec, or a full spec) and validated in the worker thread. When the worker fails
 * (a time limit, its heap, a crash) every completion of the request comes back invalid with the
 * reason. A patch applies to `base` when given (an episode's last valid job), else to `baseline`.
 */
export async function parseProposals(
  completions: string[],
  brief: TaskBrief,
  baseline: unknown,
  timeoutMs: number = INTAKE_DEFAULTS.parseTimeoutMs,
  base?: unknown,
): Promise<GuardedProposal[]> {
  parsing += 1;
  try {
    const out = await intakePool().run({ completions, brief, baseline, ...(base === undefined ? {} : { base }) }, { timeoutMs });
    if (out.ok && Array.isArray(out.value) && out.value.length === completions.length) return out.value;
    const why = out.ok ? 'the parser answered with the wrong number of proposals' : `${out.kind}: ${out.message}`;
    const error = oneLine(`the completion could not be parsed (${why})`, 500);
    return completions.map(() => ({ spec: null, trace: null, rejected: { kind: 'invalid', error } }));
  } finally {
    parsing -= 1;
  }
}

/** The trace stored for a completion: whole when its proposal is valid, else its first KiB and how much was dropped. */
export function traceOf(text: string, p: GuardedProposal, keep: number = INTAKE_DEFAULTS.invalidTraceChars): { completion: string } {
  if (!p.rejected || text.length <= keep) return { completion: text };
  // Never cut a surrogate pair in half.
  const cut = /[\ud800-\udbff]/.test(text[keep - 1]) ? keep - 1 : keep;
  return { completion: `${text.slice(0, cut)}…[${text.length - cut} more characters not kept]` };
}

/** The digest a request is matched by: sha256 over its task and completions. */
export function requestDigest(task: string, completions: string[]): string {
  const h = createHash('sha256').update(`rrl-request/1\n${task}\n`);
  for (const c of completions) h.update(`${Buffer.byteLength(c)}\n`).update(c);
  return h.digest('hex');
}

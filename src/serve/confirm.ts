/**
 * `POST /v1/tasks/{id}/confirmations`: a spec trained on the task's confirmation seeds (the
 * harness's own, from the evaluation secret) and scored, for a report that needs a spec's
 * quality rather than one lucky seed (the held-out LLM report's best-of-N). The answer is the
 * harness's one confirmation rule (`confirmation` of outer/noise.ts: every seed counts, a failed
 * one as the failure it is) and never names a seed.
 *
 * The jobs are stored as kind `confirm` with agent `report` and no parent, in round 0 (a
 * proposal's confirmations have its request as round and it as parent): the settling of
 * proposals never reads them (`proposalConfirms`), so a report's confirmation is never a
 * proposal's reward. A spec confirmed before (the same validated spec, seed aside) reuses its
 * jobs; jobs a stopped server left pending run when it is asked again.
 */
import type { z } from 'zod';
import type { Store, JobRow } from '../store/store.js';
import type { TaskBrief } from '../spec/brief.js';
import { oneLine } from '../spec/bounds.js';
import { CONFIRM_SEEDS, confirmation, harnessSeeds, taskReference, withSeed } from '../outer/noise.js';
import type { NewJob } from '../outer/settle.js';
import { RoundInterrupted, type Rounds } from '../outer/round.js';
import { specIdentity } from '../outer/identity.js';
import { parseProposals } from './intake.js';
import { HttpError } from './http.js';
import type { ConfirmationResponse } from './schemas.js';

/** The agent a report confirmation's jobs are stored under. */
export const REPORT_AGENT = 'report';

/** The answer of `POST /v1/tasks/{id}/confirmations`. */
export type ConfirmationAnswer = z.infer<typeof ConfirmationResponse>;

/** True for a job of a report confirmation (never a proposal's). */
export function isReportConfirmation(r: Pick<JobRow, 'kind' | 'agent'>): boolean {
  return r.kind === 'confirm' && r.agent === REPORT_AGENT;
}

/** The confirmation jobs that settle proposals: a run's `confirm` jobs less the reports'. */
export function proposalConfirms(rows: JobRow[]): JobRow[] {
  return rows.filter((r) => !isReportConfirmation(r));
}

/**
 * The jobs of report confirmation `k` of `task`: `spec` on each of the task's confirmation seeds
 * (the seeds `confirmJobs` of outer/settle.ts trains a proposal on), in slots `k·CONFIRM_SEEDS + i`.
 */
export function reportConfirmJobs(task: string, spec: unknown, k: number, secret: string): NewJob[] {
  return harnessSeeds(task, CONFIRM_SEEDS, secret).map((seed, i) => ({
    round: 0,
    slot: k * CONFIRM_SEEDS + i,
    task,
    kind: 'confirm',
    agent: REPORT_AGENT,
    spec: withSeed(spec, seed),
    trace: null,
  }));
}

/** What a report confirmation needs of the service. */
export interface ReportHarness {
  store: Store;
  runId: string;
  secret: string;
  /** The run's rounds: the task's baselines and the confirmation's jobs run through them (a job asked for twice trains once). */
  rounds: Pick<Rounds, 'ensureBaselines' | 'runRows'>;
  stopped(): boolean;
  /** Lines for the operator. */
  note(message: string): void;
}

/** The answer from a confirmation's finished jobs and the task's reference. */
export function confirmationAnswer(rows: JobRow[], baselineRows: JobRow[]): ConfirmationAnswer {
  const c = confirmation(rows, taskReference(baselineRows));
  if (!c) throw new Error('a confirmation was answered before its jobs finished'); // a bug: the jobs were awaited
  const bad = rows.filter((r) => r.status !== 'succeeded');
  const first = bad[0];
  const reason =
    c.complete || !first
      ? null
      : oneLine(`${bad.length} of ${rows.length} confirmation seeds did not score (${first.failureKind ?? first.status}: ${first.error ?? 'no reason'})`, 500);
  return {
    confirmed: {
      normalized: c.normalized,
      uncertainty: Number.isFinite(c.uncertainty) ? c.uncertainty : null,
      complete: c.complete,
      scored: c.scored,
      seeds: rows.length,
      failed: c.failed,
      unscorable: c.unscorable,
    },
    status: c.complete ? 'succeeded' : 'failed',
    reason,
  };
}

/** Report confirmations of one service: a spec asked for twice shares one group of jobs. */
export class ReportConfirmations {
  constructor(private readonly h: ReportHarness) {}

  /** The task's report confirmation jobs, by group (slot div CONFIRM_SEEDS). */
  private groups(task: string): Map<number, JobRow[]> {
    const out = new Map<number, JobRow[]>();
    for (const r of this.h.store.jobs(this.h.runId, { kind: 'confirm', round: 0 })) {
      if (r.task !== task || !isReportConfirmation(r)) continue;
      const k = Math.floor(r.slot / CONFIRM_SEEDS);
      out.set(k, [...(out.get(k) ?? []), r]);
    }
    return out;
  }

  /** The group of `spec` on `task`: the one confirming the same spec, else a new one recorded now. */
  private groupOf(task: string, spec: unknown): number {
    const groups = this.groups(task);
    const identity = specIdentity(spec, task);
    for (const [k, rows] of groups) if (specIdentity(rows[0].spec, task) === identity) return k;
    const k = groups.size ? Math.max(...groups.keys()) + 1 : 0;
    this.h.store.addJobs(this.h.runId, reportConfirmJobs(task, spec, k, this.h.secret));
    return k;
  }

  /**
   * Confirms the spec of `completion` (a full spec or a merge patch over `baseline`) on `task`'s
   * confirmation seeds; answers once every seed is done. An answer that is no valid spec is
   * `invalid` with its reason, and nothing trains. Throws 503 when the server stops meanwhile.
   */
  async confirm(task: string, brief: TaskBrief, baseline: unknown, completion: string): Promise<ConfirmationAnswer> {
    const interrupted = (): HttpError => new HttpError(503, 'the server is shutting down; ask again once it is started again with --resume');
    const [p] = await parseProposals([completion], brief, baseline);
    if (!p || p.rejected || p.spec === null || p.spec === undefined) {
      return { confirmed: null, status: 'invalid', reason: oneLine(p?.rejected?.error ?? 'no spec in the completion', 500) };
    }
    let k: number;
    try {
      if (this.h.stopped()) throw new RoundInterrupted();
      await this.h.rounds.ensureBaselines([brief], { note: (message) => this.h.note(`${task}: ${message}`) });
      // From finding the group to recording its jobs nothing awaits: two asks for one spec share its jobs.
      k = this.groupOf(task, p.spec);
      await this.h.rounds.runRows(this.groups(task).get(k) ?? []);
    } catch (err) {
      if (err instanceof RoundInterrupted) throw interrupted();
      throw err;
    }
    const rows = this.groups(task).get(k) ?? [];
    const baselines = this.h.store.jobs(this.h.runId, { kind: 'baseline' }).filter((r) => r.task === task);
    return confirmationAnswer(rows, baselines);
  }
}

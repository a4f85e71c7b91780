/**
 * What `rrl serve` answers about stored jobs and settled requests: the job view of
 * `GET /v1/jobs/{id}` and the answer of a request, from the store's rows and a round's rewards.
 */
import type { z } from 'zod';
import type { JobRow, Store } from '../store/store.js';
import { getPublicTask } from '../tasks/briefs.js';
import { isUnchanged } from '../outer/answer.js';
import type { JobReward } from '../outer/settle.js';
import { isJsonObject } from '../spec/patch.js';
import type { JobResponse, RewardsResponse } from './schemas.js';
import { isReportConfirmation } from './confirm.js';

/** The answer to a request: its rewards and results. */
export type RewardsAnswer = z.infer<typeof RewardsResponse>;

/** What a stored job was written as: the patch (null for a full spec) and whether it is the baseline's job. */
function answerFields(r: JobRow): { patch: Record<string, unknown> | null; unchanged: boolean } {
  const patch = isJsonObject(r.patch) ? r.patch : null;
  const t = getPublicTask(r.task);
  return { patch, unchanged: r.status !== 'invalid' && isUnchanged(r.spec, t.brief, t.baseline) };
}

/** Why a proposal of a settled request has no reward (its answer's reason), or null. */
function unscorableOf(store: Store, runId: string, r: JobRow): string | null {
  if (r.kind !== 'proposal') return null;
  const answer = store.request(runId, r.round)?.response as RewardsAnswer | null | undefined;
  const reason = answer?.results.find((x) => x.job === r.id)?.reason ?? null;
  return reason?.startsWith('unscorable:') ? reason : null;
}

/** The view of stored job `r` that `GET /v1/jobs/{id}` answers: never a harness seed, never a report's confirmation as a request's. */
export function jobView(store: Store, runId: string, r: JobRow): z.infer<typeof JobResponse> {
  return {
    job: r.id,
    request: r.kind === 'proposal' || (r.kind === 'confirm' && !isReportConfirmation(r)) ? r.round : null,
    task: r.task,
    kind: r.kind as 'proposal' | 'baseline' | 'confirm', // `rrl serve` runs store no rung jobs (successive halving is `rrl train`'s)
    status: r.status,
    failureKind: r.failureKind,
    score: r.normalized === null ? null : { normalized: r.normalized, stderr: r.stderr },
    reason: r.error,
    reward: r.reward,
    unscorable: r.reward === null ? unscorableOf(store, runId, r) : null,
    // Only a proposal's hit on an earlier proposal's result: a hit on a harness seed's would name that seed.
    cached: r.kind === 'proposal' && r.cacheHit !== null && r.cacheOrigin === 'proposal',
    ...answerFields(r),
    // A proposal's seed is its agent's own; the harness's jobs run on its seeds, which a spec would name.
    spec: r.kind === 'proposal' && r.status !== 'invalid' && isJsonObject(r.spec) ? r.spec : null,
    cost: { envSteps: r.envSteps, examples: r.examples, wallSeconds: r.wallSeconds },
  };
}

/**
 * The answer of request `id` from its settled round: a job the harness could not score is
 * neither paid nor charged (reward null, its reason `unscorable: …`).
 */
export function requestAnswer(id: number, rewards: JobReward[]): RewardsAnswer {
  return {
    request: id,
    replayed: false,
    rewards: rewards.map((g) => (g.unscorable === null ? g.reward : null)),
    results: rewards.map(({ row: r, unscorable, detail }) => ({
      status: r.status as 'succeeded' | 'failed' | 'invalid',
      score: r.normalized === null ? null : { normalized: r.normalized, stderr: r.stderr, uncertainty: (detail.uncertainty as number | null) ?? null },
      reason: unscorable ?? (r.status === 'succeeded' ? null : (r.error ?? r.failureKind ?? 'failed')),
      job: r.id,
      ...answerFields(r),
    })),
  };
}

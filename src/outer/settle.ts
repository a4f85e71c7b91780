/**
 * Settling a group: from finished jobs to outer rewards, with training noise accounted for
 * (outer/noise.ts). Both `rrl train` (outer/loop.ts) and `rrl serve` (serve/service.ts) settle
 * a group the same way:
 *
 * 1. the task's **standing**: its reference (the baseline spec over the harness's seeds) and the
 *    best confirmed score before the group;
 * 2. the group's **bonus candidates**: full-budget jobs whose score beats that best by more than
 *    the noise a confirmed score would carry; each is trained again on the harness's
 *    confirmation seeds (jobs of kind `confirm`, stored before they run, so resume keeps them);
 * 3. the **rewards**: improvement over the reference (from the confirmed mean where there is
 *    one), a bonus only for a confirmed score beyond the noise, advantages within the group.
 */
import type { TaskBrief } from '../spec/brief.js';
import type { JobRow } from '../store/store.js';
import { specIdentity } from './identity.js';
import { unscorableReason } from './unscorable.js';
import { type RewardParts, type RewardRuleName, type ScoredEntry, bestEntry, bonusThreshold, groupAdvantages, outerReward } from './reward.js';
import {
  BASELINE_ATTEMPTS,
  BASELINE_SEEDS,
  CONFIRM_SEEDS,
  type Confirmation,
  type TaskReference,
  confirmation,
  harnessSeeds,
  latestAttempts,
  machineDependent,
  seedIndex,
  scoreUncertainty,
  taskReference,
  trainNoise,
  withSeed,
} from './noise.js';

/** A job to add to the store (as `Store.addJobs` takes it). */
export interface NewJob {
  round: number;
  slot: number;
  task: string;
  kind: 'baseline' | 'confirm';
  agent: string;
  spec: unknown;
  trace: null;
  parentId?: number;
}

/** The baseline jobs of a task: its baseline spec on each of the harness's seeds. */
export function baselineJobs(task: string, baseline: unknown, secret: string): NewJob[] {
  return harnessSeeds(task, BASELINE_SEEDS, secret).map((seed, slot) => ({
    round: 0,
    slot,
    task,
    kind: 'baseline',
    agent: 'baseline',
    spec: withSeed(baseline, seed),
    trace: null,
  }));
}

/**
 * New attempts for baseline seeds whose latest attempt failed for a reason of the machine
 * (time, memory, a lost worker, a scorer failure), up to BASELINE_ATTEMPTS per seed; a NaN or an
 * invalid baseline is not retried.
 */
export function baselineRetries(baselineRows: JobRow[]): NewJob[] {
  const attempts = new Map<number, number>();
  for (const r of baselineRows) attempts.set(seedIndex(r), (attempts.get(seedIndex(r)) ?? 0) + 1);
  return latestAttempts(baselineRows)
    .filter((r) => machineDependent(r) && (attempts.get(seedIndex(r)) ?? 0) < BASELINE_ATTEMPTS)
    .map((r) => {
      const attempt = attempts.get(seedIndex(r)) ?? 1;
      const slot = attempt * BASELINE_SEEDS + seedIndex(r);
      return { round: r.round, slot, task: r.task, kind: 'baseline', agent: 'baseline', spec: r.spec, trace: null };
    });
}

/** What a group is settled against. */
export interface TaskStanding {
  reference: TaskReference;
  /** The best confirmed score before the group (the reference when none beats it). */
  best: ScoredEntry;
}

/**
 * The confirmations of `proposals` among `confirmRows` (pending ones left out): a proposal's own
 * (by parent id), else that of the baseline spec or of an earlier spec that trains the same job
 * (`specIdentity`: the validated spec, seed aside; `own` false) — a spec whose quality is known is
 * paid what is known, whatever its own job did (the baseline reseeded is paid exactly the
 * reference; a spec whose confirmation seeds failed is paid that failure again), and only a
 * proposal's own confirmation can earn it the bonus. A confirmation every seed of which the
 * harness lost (`normalized` null) is known of no other spec, and leaves its own proposal unscorable.
 */
export function confirmations(proposals: JobRow[], confirmRows: JobRow[], ref: TaskReference): Map<number, Confirmation & { own: boolean }> {
  const byParent = new Map<number, JobRow[]>();
  for (const r of confirmRows) if (r.parentId !== null) byParent.set(r.parentId, [...(byParent.get(r.parentId) ?? []), r]);
  const bySpec = new Map<string, Confirmation>();
  // The baseline spec's quality is known from the start: its reseeded variants are paid the reference.
  if (ref.spec !== null && ref.mean !== null) {
    bySpec.set(ref.spec, {
      normalized: ref.mean,
      uncertainty: ref.uncertainty,
      complete: true,
      scored: ref.scored,
      failed: 0,
      unscorable: 0,
      jobIds: [],
    });
  }
  for (const rows of byParent.values()) {
    const c = confirmation(rows, ref);
    const key = specIdentity(rows[0].spec, rows[0].task);
    if (c && c.normalized !== null && !bySpec.has(key)) bySpec.set(key, c);
  }
  const out = new Map<number, Confirmation & { own: boolean }>();
  for (const p of proposals) {
    const own = byParent.has(p.id) ? confirmation(byParent.get(p.id)!, ref) : null;
    const known = own ?? (p.status === 'invalid' ? undefined : bySpec.get(specIdentity(p.spec, p.task))) ?? null;
    if (known) out.set(p.id, { ...known, own: own !== null });
  }
  return out;
}

/**
 * The standing of one task: the reference from its baseline jobs, and the best of it and the
 * scores of `earlier` proposals confirmed as themselves (only confirmed scores can hold the
 * best: a single lucky seed never raises the bar, nor counts as beaten).
 */
export function taskStanding(baselineRows: JobRow[], earlier: JobRow[], confirmRows: JobRow[]): TaskStanding {
  const reference = taskReference(baselineRows);
  const confirmed = [...confirmations(earlier, confirmRows, reference)].filter(([, c]) => c.own && c.normalized !== null);
  const best = bestEntry([
    { jobId: null, normalized: reference.mean ?? 0, uncertainty: reference.mean === null ? null : reference.uncertainty },
    ...confirmed.map(([jobId, c]): ScoredEntry => ({ jobId, normalized: c.normalized as number, uncertainty: c.uncertainty })),
  ])!;
  return { reference, best };
}

/** What a proposal settled by successive halving is paid from (outer/fidelity.ts). */
export interface PaidOverride {
  /** The normalised score the rule is applied to (null: the failure penalty). */
  normalized: number | null;
  /** True for the proposal's own full-budget score: only such a score can earn a bonus. */
  full: boolean;
  /** Share of the task's compute cap the `cost` rule charges. */
  computeShare: number;
  /** Why the proposal is neither paid nor charged (its last rung lost to the harness); absent when it is paid. */
  unscorable?: string;
}

/**
 * The jobs of a group worth confirming: succeeded at their full budget, with a score that beats
 * the best by more than a confirmed score's noise would need (the evaluation's standard error
 * and the training noise over CONFIRM_SEEDS seeds), and not already confirmed (as themselves or
 * as a spec that differs only by its seed, among `confirmRows`). None without a reference.
 */
export function bonusCandidates(rows: JobRow[], standing: TaskStanding, confirmRows: JobRow[], paid?: Map<number, PaidOverride>): JobRow[] {
  const { reference: ref, best } = standing;
  if (ref.mean === null) return [];
  const known = confirmations(rows, confirmRows, ref);
  return rows.filter((r) => {
    const p = paid?.get(r.id);
    if (r.status !== 'succeeded' || (p && !p.full) || known.has(r.id)) return false;
    const score = p ? p.normalized : r.normalized;
    if (score === null || !Number.isFinite(score)) return false;
    const se = r.stderr !== null && Number.isFinite(r.stderr) && r.stderr > 0 ? r.stderr : 0;
    const confirmedNoise = Math.sqrt(se ** 2 + trainNoise(ref) ** 2 / CONFIRM_SEEDS);
    return score - best.normalized > bonusThreshold(confirmedNoise, best.uncertainty);
  });
}

/**
 * The confirmation jobs of `candidates` not yet among `existing` (the run's `confirm` jobs):
 * each candidate's spec on the first CONFIRM_SEEDS of the task's harness seeds — the seeds its
 * baseline trained on, so a spec that differs from the baseline only by its seed is confirmed
 * on the baseline's own runs. Seed `i` of the candidate in slot `s` is stored in slot
 * `s · CONFIRM_SEEDS + i` (slots are unique within a task and iteration).
 */
export function confirmJobs(candidates: JobRow[], existing: JobRow[], secret: string): NewJob[] {
  const have = new Set(existing.map((r) => r.parentId));
  return candidates
    .filter((c) => !have.has(c.id))
    .flatMap((c) =>
      harnessSeeds(c.task, CONFIRM_SEEDS, secret).map(
        (seed, i): NewJob => ({
          round: c.round,
          slot: c.slot * CONFIRM_SEEDS + i,
          task: c.task,
          kind: 'confirm',
          agent: 'harness',
          spec: withSeed(c.spec, seed),
          trace: null,
          parentId: c.id,
        }),
      ),
    );
}

/** Share of the task's compute cap a job used (env steps for control, examples for supervised). */
export function computeShare(job: { envSteps: number | null; examples: number | null }, brief: TaskBrief): number {
  if (brief.kind === 'control') return brief.budget.maxEnvSteps > 0 ? (job.envSteps ?? 0) / brief.budget.maxEnvSteps : 0;
  const cap = brief.budget.maxExamples ?? 0;
  return cap > 0 ? (job.examples ?? 0) / cap : 0;
}

/** One job's reward as the store records it. */
export interface JobReward extends RewardParts {
  row: JobRow;
  jobId: number;
  /** Normalised within the group's paid jobs; 0 for an unscorable one. */
  advantage: number;
  /** Why the job is neither paid nor charged (outer/unscorable.ts), or null when it is paid `reward`. */
  unscorable: string | null;
  groupId: string;
  detail: Record<string, unknown>;
}

/** How a group is settled: the id its rewards are recorded under, the run's rule, and what successive halving paid. */
export interface GroupSettling {
  groupId: string;
  /** The outer reward rule (default `improvement`). */
  reward?: { rule: RewardRuleName; lambda: number };
  /** Per job id, the score and compute a rule sees in place of the job's own (proposals settled by successive halving). */
  paid?: Map<number, PaidOverride>;
}

/**
 * The outer rewards of one group of finished jobs on one task, under the run's rule, against
 * the task's standing; a candidate is paid from its confirmation (`confirmRows`, by parent id)
 * and earns the bonus only when that confirmation is complete and beyond the noise. A job the
 * harness could not score (`unscorable`) is neither paid nor charged: it has no advantage and
 * does not count in the others'. Advantages are normalised within the group's paid jobs.
 */
export function rewardGroup(rows: JobRow[], brief: TaskBrief, standing: TaskStanding, confirmRows: JobRow[], how: GroupSettling): JobReward[] {
  const { groupId, reward, paid } = how;
  const { reference: ref, best } = standing;
  const confirmed = confirmations(rows, confirmRows, ref);
  const scored = rows.map((r) => {
    const p = paid?.get(r.id);
    const c = p && !p.full ? undefined : confirmed.get(r.id);
    const single = p ? p.normalized : r.normalized;
    // A confirmed (or otherwise known) score is what the spec is worth, whatever its own job did.
    const fromConfirmation = c !== undefined && c.normalized !== null;
    const uncertainty = fromConfirmation ? c.uncertainty : scoreUncertainty(r.stderr, ref);
    const status = fromConfirmation ? 'succeeded' : p ? (p.normalized === null ? 'failed' : 'succeeded') : (r.status as 'succeeded' | 'failed' | 'invalid');
    return {
      row: r,
      confirmation: c ?? null,
      uncertainty,
      unscorable: unscorableOf(r, p, c, ref),
      ...outerReward(
        {
          status,
          normalized: fromConfirmation ? c.normalized : single,
          baseline: ref.mean,
          bestSoFar: best.normalized,
          uncertainty,
          bestUncertainty: best.uncertainty,
          confirmed: fromConfirmation && c.own && c.complete,
          computeShare: p ? p.computeShare : computeShare(r, brief),
          fullBudget: p ? p.full : true,
        },
        reward?.rule,
        reward?.lambda,
      ),
    };
  });
  // Advantages among the paid jobs only: an unscorable job has none and moves no other's.
  const paidIndex = scored.flatMap((s, i) => (s.unscorable === null ? [i] : []));
  const paidAdvantages = groupAdvantages(paidIndex.map((i) => scored[i].reward));
  const advantages = new Map(paidIndex.map((i, k) => [i, paidAdvantages[k]]));
  return scored.map((s, i) => ({
    row: s.row,
    reward: s.reward,
    improvement: s.improvement,
    bonus: s.bonus,
    cost: s.cost,
    jobId: s.row.id,
    advantage: advantages.get(i) ?? 0,
    unscorable: s.unscorable,
    groupId,
    detail: {
      rule: reward?.rule ?? 'improvement',
      improvement: s.improvement,
      bonus: s.bonus,
      cost: s.cost,
      baseline: ref.mean,
      baselineSd: ref.trainSd,
      baselineSeeds: ref.scored,
      bestSoFar: best.normalized,
      bestJob: best.jobId,
      bestUncertainty: best.uncertainty,
      stderr: s.row.stderr,
      uncertainty: Number.isFinite(s.uncertainty) ? s.uncertainty : null,
      confirmation: s.confirmation ? confirmationDetail(s.confirmation) : null,
      ...(ref.missing ? { unscored: ref.missing } : {}),
      ...(paid?.has(s.row.id) ? { paidFrom: paid.get(s.row.id) } : {}),
    },
  }));
}

/**
 * Why a job of a group is neither paid nor charged, or null: a known score pays it whatever its
 * own job did; otherwise the harness lost its last rung, every seed of its own confirmation, or
 * the job itself, or there is no reference to measure it from.
 */
function unscorableOf(r: JobRow, p: PaidOverride | undefined, c: (Confirmation & { own: boolean }) | undefined, ref: TaskReference): string | null {
  if (p?.unscorable) return p.unscorable;
  if (c !== undefined && c.normalized !== null) return null;
  if (c !== undefined) return "unscorable: every confirmation seed failed the harness's way";
  return unscorableReason(r, ref.missing);
}

/** A confirmation as a reward's detail records it. */
function confirmationDetail(c: Confirmation & { own: boolean }): Record<string, unknown> {
  return {
    normalized: c.normalized,
    uncertainty: c.uncertainty,
    complete: c.complete,
    own: c.own,
    scored: c.scored,
    failed: c.failed,
    unscorable: c.unscorable,
    jobs: c.jobIds,
  };
}

/**
 * Multi-fidelity in the outer loop: successive halving (ASHA-style, synchronous within a group).
 *
 * Within one group (one task, G proposals of one iteration) every valid proposal is first trained
 * at rung 0 on `minShare` of its budget and scored on the hidden evaluation; the top 1/eta of each
 * rung (by normalised score, failures never) go on to the next rung at eta× the budget, up to the
 * full budget. A reduced budget is a spec change made by the harness and stored as such (a job of
 * kind `rung` with the spec that ran), never by the agent; the engine counts it like any budget.
 * Control rung jobs also stop early when their training curve stays flat (`budget.stopWhenFlat`).
 *
 * The rule that pays a proposal (`paidScores`): a proposal that reached the full budget is paid
 * from its full-budget score, as without fidelity. One stopped at rung r is paid from its own
 * score at rung r, but never more than the paid score of any proposal promoted over it from rung r
 * (it ranked below them at the same fidelity, so its full-budget score is not plausibly higher),
 * and never the improvement rule's bonus (that needs a full-budget score). Its compute share in
 * the `cost` rule is what its spec asked for, not the little it ran, so being stopped early is
 * never cheaper for the agent than training at full budget.
 */
import type { TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import { validateSpec } from '../inner/spec-check.js';
import type { JobOutcome, JobRow, Store } from '../store/store.js';
import { type PaidOverride, computeShare } from './settle.js';

/** The run's fidelity setting (absent: every proposal trains at its full budget). */
export interface FidelityConfig {
  mode: 'asha';
  /** Promotion factor: the top 1/eta of a rung go on, at eta× the budget. */
  eta: number;
  /** Share of the spec's budget at rung 0, in (0, 1]. */
  minShare: number;
}

/** The default setting of `--fidelity asha`: rungs at 1/9, 1/3 and the full budget. */
export const ASHA_DEFAULTS: FidelityConfig = { mode: 'asha', eta: 3, minShare: 1 / 9 };

/** The budget shares of the rungs, lowest first, ending at 1: minShare·eta^r while below 1. */
export function rungShares(f: Pick<FidelityConfig, 'eta' | 'minShare'>): number[] {
  if (!(f.eta >= 2) || !(f.minShare > 0) || f.minShare > 1) {
    throw new Error(`fidelity: eta must be >= 2 and minShare in (0, 1], got eta ${f.eta}, minShare ${f.minShare}`);
  }
  const shares: number[] = [];
  for (let s = f.minShare; s < 1 - 1e-9; s *= f.eta) shares.push(s);
  shares.push(1);
  return shares;
}

/** How many of `n` entrants of a rung are promoted: floor(n / eta), at least one. */
export function promotedCount(n: number, eta: number): number {
  return n <= 0 ? 0 : Math.max(1, Math.floor(n / eta));
}

/** One entrant's result at a rung. */
export interface RungResult {
  /** The proposal (its job id). */
  proposal: number;
  status: string;
  normalized: number | null;
}

/**
 * The proposals promoted from a rung: the `promotedCount` best succeeded results by normalised
 * score (ties: the earlier proposal first); a failed or unscored entrant is never promoted.
 */
export function promote(results: RungResult[], eta: number): number[] {
  const ok = results.filter((r) => r.status === 'succeeded' && r.normalized !== null && Number.isFinite(r.normalized));
  ok.sort((a, b) => (b.normalized as number) - (a.normalized as number) || a.proposal - b.proposal);
  return ok.slice(0, Math.min(ok.length, promotedCount(results.length, eta))).map((r) => r.proposal);
}

/** The budget field a task counts: env steps (control) or examples (supervised). */
export function budgetField(brief: TaskBrief): 'envSteps' | 'examples' {
  return brief.kind === 'control' ? 'envSteps' : 'examples';
}

/** The budget a validated spec will really get: its own, capped by the brief. */
export function effectiveBudget(spec: JobSpec, brief: TaskBrief): number {
  if (brief.kind === 'control') return Math.min(spec.budget.envSteps ?? 0, brief.budget.maxEnvSteps);
  return Math.min(spec.budget.examples ?? 0, brief.budget.maxExamples ?? 0);
}

/**
 * The spec a rung trains: the agent's spec as written with its budget cut to `share` of the
 * budget it would really get (at least one env step per environment), and, for control tasks,
 * `stopWhenFlat` on. At share 1 the budget is left as the agent wrote it.
 */
export function rungSpec(raw: unknown, checked: JobSpec, brief: TaskBrief, share: number): unknown {
  const s = raw as Record<string, unknown>;
  const budget: Record<string, unknown> = { ...(s.budget as Record<string, unknown>) };
  if (share < 1) {
    const field = budgetField(brief);
    const floor = brief.kind === 'control' ? checked.environment.numEnvs : 1;
    budget[field] = Math.max(floor, Math.ceil(share * effectiveBudget(checked, brief)));
  }
  if (brief.kind === 'control') budget.stopWhenFlat = true;
  return { ...s, budget };
}

/** What one proposal did under successive halving. */
export interface ProposalFidelity {
  proposal: number;
  /** Rung results, rung 0 first, as far as it got. */
  rungs: { status: string; normalized: number | null }[];
}

/** What a proposal is paid from. */
export interface PaidScore {
  /** The normalised score the reward rule is applied to (null: failed, paid the failure penalty). */
  normalized: number | null;
  /** True when it is the proposal's own full-budget score (only such a score can earn a bonus). */
  full: boolean;
  /** The highest rung it reached. */
  rung: number;
}

/**
 * The scores proposals are paid from (see the module comment): full-budget proposals their own
 * score; a proposal stopped at rung r its score there, capped by the paid score of every proposal
 * promoted over it from rung r. Returns one entry per proposal, in the order given.
 */
export function paidScores(proposals: ProposalFidelity[], top: number): PaidScore[] {
  const paid = new Map<number, PaidScore>();
  const reached = (p: ProposalFidelity): number => p.rungs.length - 1;
  for (let r = top; r >= 0; r--) {
    // Proposals promoted past rung r: already paid (higher rungs are settled first).
    const above = proposals.filter((p) => reached(p) > r).map((p) => paid.get(p.proposal)!);
    const caps = above.map((a) => a.normalized).filter((v): v is number => v !== null);
    const cap = caps.length ? Math.min(...caps) : Infinity;
    for (const p of proposals.filter((q) => reached(q) === r)) {
      const own = p.rungs[r];
      const ok = own.status === 'succeeded' && own.normalized !== null && Number.isFinite(own.normalized);
      paid.set(p.proposal, {
        normalized: ok ? Math.min(own.normalized as number, cap) : null,
        full: r === top,
        rung: r,
      });
    }
  }
  return proposals.map((p) => paid.get(p.proposal) ?? { normalized: null, full: false, rung: -1 });
}

/** What the successive-halving driver needs from the loop. */
export interface HalvingContext {
  store: Store;
  runId: string;
  iteration: number;
  fidelity: FidelityConfig;
  /** The briefs of the run's tasks, by id. */
  brief: (task: string) => TaskBrief;
  /** Runs pending rows to their outcome (the loop's evaluator); throws when the run is interrupted. */
  runJobs: (rows: JobRow[]) => Promise<void>;
}

const rungRowsOf = (c: HalvingContext): JobRow[] => c.store.jobs(c.runId, { iteration: c.iteration, kind: 'rung' });

/**
 * Settles an iteration's pending proposals by successive halving, all groups (tasks) in
 * lockstep: invalid proposals are recorded invalid; rung r's jobs of every group are stored in
 * one transaction, trained, then the promoted ones make rung r+1; at the end each proposal takes
 * the outcome of the highest rung it reached (score, status, artifact) with the compute of all
 * its rungs, in one transaction. Every step is in the store before the next depends on it, and a
 * resumed run recreates nothing that exists (rung jobs are found by iteration, task and rung), so
 * no finished rung job is lost or trained again. `alsoFirst` (pending baselines) trains with rung 0.
 */
export async function successiveHalving(c: HalvingContext, proposals: JobRow[], alsoFirst: JobRow[] = []): Promise<void> {
  const shares = rungShares(c.fidelity);
  const pending = proposals.filter((p) => p.status === 'pending');
  const valid: { row: JobRow; spec: JobSpec }[] = [];
  const invalid: { id: number; outcome: JobOutcome }[] = [];
  for (const p of pending) {
    const checked = validateSpec(p.spec, c.brief(p.task));
    if (checked.ok) valid.push({ row: p, spec: checked.spec });
    else invalid.push({ id: p.id, outcome: { status: 'invalid', failureKind: 'invalid', error: checked.error.message } });
  }
  if (invalid.length) c.store.finishJobs(invalid);
  const tasks = [...new Set(valid.map((v) => v.row.task))];
  for (let r = 0; r < shares.length; r++) {
    const existing = rungRowsOf(c);
    const add: Parameters<Store['addJobs']>[1] = [];
    for (const task of tasks) {
      const mine = existing.filter((j) => j.task === task);
      if (mine.some((j) => j.rung === r)) continue;
      const entrants =
        r === 0
          ? valid.filter((v) => v.row.task === task).map((v) => v.row.id)
          : promote(
              mine.filter((j) => j.rung === r - 1).map((j) => ({ proposal: j.parentId as number, status: j.status, normalized: j.normalized })),
              c.fidelity.eta,
            ).sort((a, b) => a - b);
      let slot = mine.length;
      for (const id of entrants) {
        const v = valid.find((x) => x.row.id === id)!;
        const brief = c.brief(task);
        const spec = rungSpec(v.row.spec, v.spec, brief, shares[r]);
        add.push({ iteration: c.iteration, slot: slot++, task, kind: 'rung', agent: v.row.agent, spec, trace: null, rung: r, parentId: id, share: shares[r] });
      }
    }
    if (add.length) c.store.addJobs(c.runId, add);
    const rows = rungRowsOf(c).filter((j) => j.rung === r && tasks.includes(j.task));
    await c.runJobs([...(r === 0 ? alsoFirst.filter((b) => b.status === 'pending') : []), ...rows]);
  }
  // Each proposal takes the outcome of the highest rung it reached, with the compute of all its rungs.
  const rungs = rungRowsOf(c);
  const settled: { id: number; outcome: JobOutcome }[] = [];
  for (const { row } of valid) {
    const mine = rungs.filter((j) => j.parentId === row.id).sort((a, b) => (a.rung ?? 0) - (b.rung ?? 0));
    const h = mine.at(-1);
    if (!h) continue; // interrupted before its rung 0 was stored: settled on resume
    const sum = (f: (j: JobRow) => number | null): number | null => (mine.some((j) => f(j) !== null) ? mine.reduce((a, j) => a + (f(j) ?? 0), 0) : null);
    settled.push({
      id: row.id,
      outcome: {
        status: h.status === 'pending' ? 'failed' : h.status,
        failureKind: h.failureKind,
        error: h.error,
        envSteps: sum((j) => j.envSteps),
        examples: sum((j) => j.examples),
        wallSeconds: sum((j) => j.wallSeconds),
        cpuSeconds: sum((j) => j.cpuSeconds),
        artifactDir: h.artifactDir,
        score: h.raw !== null && h.normalized !== null ? { raw: h.raw, normalized: h.normalized, stderr: h.stderr } : null,
        share: h.share,
      },
    });
  }
  c.store.finishJobs(settled);
}

/**
 * What each settled proposal of a group is paid from (`paidScores`), as the reward rules take it:
 * the score, whether it is a full-budget one, and the compute share the `cost` rule charges (the
 * full-budget job's own use; for a proposal stopped early, the share its spec asked for).
 */
export function fidelityPaid(proposals: JobRow[], rungRows: JobRow[], brief: TaskBrief, fidelity: FidelityConfig): Map<number, PaidOverride> {
  const top = rungShares(fidelity).length - 1;
  const list: { row: JobRow; rungs: JobRow[] }[] = proposals
    .map((row) => ({ row, rungs: rungRows.filter((j) => j.parentId === row.id).sort((a, b) => (a.rung ?? 0) - (b.rung ?? 0)) }))
    .filter((p) => p.rungs.length > 0);
  const paid = paidScores(
    list.map((p) => ({ proposal: p.row.id, rungs: p.rungs.map((j) => ({ status: j.status, normalized: j.normalized })) })),
    top,
  );
  const out = new Map<number, PaidOverride>();
  list.forEach((p, i) => {
    const last = p.rungs.at(-1)!;
    let share: number;
    if (paid[i].full) share = computeShare(last, brief);
    else {
      const checked = validateSpec(p.row.spec, brief);
      const cap = brief.kind === 'control' ? brief.budget.maxEnvSteps : (brief.budget.maxExamples ?? 0);
      share = checked.ok && cap > 0 ? Math.min(1, effectiveBudget(checked.spec, brief) / cap) : 1;
    }
    out.set(p.row.id, { normalized: paid[i].normalized, full: paid[i].full, computeShare: share });
  });
  return out;
}

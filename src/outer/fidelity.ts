/**
 * Multi-fidelity in the outer loop: successive halving with asynchronous promotion (ASHA-style).
 *
 * Within one group (one task, G proposals of one iteration) every valid proposal is first trained
 * at rung 0 on `minShare` of the budget its full job would use (`effectiveBudget`) and scored on
 * the hidden evaluation; the top 1/eta of each rung (by normalised score, failures never) go on to
 * the next rung at eta× the budget, up to the full budget. A proposal is promoted the moment its place in the top 1/eta is certain, whatever
 * the entrants still training score (`decideRung`), so its next rung starts while the rest of its
 * rung, and of every other group, still trains. It is promoted on exactly the ranking synchronous
 * successive halving would use: which jobs run, and what each proposal is paid, never depend on
 * which job finished first (a job cannot buy a promotion by being fast). A reduced budget is a spec change made by the harness and stored as such (a job of
 * kind `rung` with the spec that ran), never by the agent; the engine counts it like any budget.
 * Control rung jobs also stop early when their training curve stays flat (`budget.stopWhenFlat`).
 * A rung below the top with a single entrant is skipped: it could only promote that entrant, so
 * training there would buy no decision (a group of 4 with eta 3 from 1/9 trains 4 jobs at 1/9 and
 * the best at the full budget, not again at 1/3).
 *
 * The rule that pays a proposal (`paidScores`): a proposal that reached the full budget is paid
 * from its full-budget score, as without fidelity. One stopped at rung r is paid from its own
 * score at rung r, but never more than the paid score of any proposal promoted over it from rung r
 * (it ranked below them at the same fidelity, so its full-budget score is not plausibly higher),
 * and never the improvement rule's bonus (that needs a full-budget score). Its compute share in
 * the `cost` rule is what its spec asked for, not the little it ran, so being stopped early is
 * never cheaper for the agent than training at full budget.
 */
import { unscorableReason } from './unscorable.js';
import type { TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import { validateSpec } from '../inner/spec-check.js';
import { estimateCompute } from '../inner/compute-estimate.js';
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

/** What is decided at a rung so far: the entrants certain to be promoted, and whether that set is final. */
export interface RungDecision {
  /** Entrants whose place among the promoted is certain, in proposal order. */
  promoted: number[];
  /** True when no entrant still training can change the promoted set (then it equals `promote` of the finished rung). */
  final: boolean;
}

/**
 * Decides a rung from the entrants finished so far (`status` 'pending': still training). A
 * succeeded entrant is promoted once fewer than `promotedCount` entrants can rank above it: those
 * finished above it (higher score; a tie, the earlier proposal) and every one still training.
 * The set is final when it is full or nobody is training; then it is `promote`'s, in proposal order.
 */
export function decideRung(results: RungResult[], eta: number): RungDecision {
  const k = promotedCount(results.length, eta);
  const scored = (r: RungResult): boolean => r.status === 'succeeded' && r.normalized !== null && Number.isFinite(r.normalized);
  const ok = results.filter(scored);
  const training = results.filter((r) => r.status === 'pending').length;
  const above = (a: RungResult, b: RungResult): boolean =>
    (a.normalized as number) > (b.normalized as number) || (a.normalized === b.normalized && a.proposal < b.proposal);
  const promoted = ok
    .filter((r) => training + ok.filter((o) => above(o, r)).length < k)
    .map((r) => r.proposal)
    .sort((a, b) => a - b);
  return { promoted, final: promoted.length === k || training === 0 };
}

/** The budget field a task counts: env steps (control) or examples (supervised). */
export function budgetField(brief: TaskBrief): 'envSteps' | 'examples' {
  return brief.kind === 'control' ? 'envSteps' : 'examples';
}

/**
 * The budget a validated spec will really use: its own, capped by the brief, and for a supervised
 * job no more than its epochs over its mixture process (`estimateCompute`'s `examplesUsed`), so
 * a rung's share is a share of what the full-budget job would train on.
 */
export function effectiveBudget(spec: JobSpec, brief: TaskBrief): number {
  if (brief.kind === 'control') return Math.min(spec.budget.envSteps ?? 0, brief.budget.maxEnvSteps);
  const capped = Math.min(spec.budget.examples ?? 0, brief.budget.maxExamples ?? 0);
  return Math.min(capped, estimateCompute(spec, brief).examplesUsed ?? capped);
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
  /**
   * Rung results, lowest first, as far as it got; `rung` is the rung's number (default: the
   * result's place in the list; a rung skipped because it had one entrant has no result).
   */
  rungs: { status: string; normalized: number | null; rung?: number }[];
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
  const rungOf = (p: ProposalFidelity, i: number): number => p.rungs[i].rung ?? i;
  const reached = (p: ProposalFidelity): number => rungOf(p, p.rungs.length - 1);
  for (let r = top; r >= 0; r--) {
    // Proposals promoted past rung r: already paid (higher rungs are settled first).
    const above = proposals.filter((p) => reached(p) > r).map((p) => paid.get(p.proposal)!);
    const caps = above.map((a) => a.normalized).filter((v): v is number => v !== null);
    const cap = caps.length ? Math.min(...caps) : Infinity;
    for (const p of proposals.filter((q) => reached(q) === r)) {
      const own = p.rungs[p.rungs.length - 1];
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
  /** Runs a pending row to its outcome (the run's job pipeline, outer/pipeline.ts); throws when the run is interrupted. */
  runRow: (row: JobRow) => Promise<void>;
  /** Progress of the iteration's jobs: `done` of the `total` stored so far (the total grows as proposals are promoted). */
  progress: (done: number, total: number) => void;
}

const rungRowsOf = (c: HalvingContext): JobRow[] => c.store.jobs(c.runId, { round: c.iteration, kind: 'rung' });

/**
 * Settles an iteration's pending proposals by successive halving, all groups (tasks) at once:
 * invalid proposals are recorded invalid; every valid proposal's rung-0 job is stored and trained;
 * whenever a job finishes, the promotions that became certain (`decideRung`) are stored as the next
 * rung's jobs and start at once; at the end each proposal takes the outcome of the highest rung it
 * reached (score, status, artifact) with the compute of all its rungs, in one transaction. Every
 * promotion is in the store before its job runs, and a resumed run recreates nothing that exists
 * (rung jobs are found by iteration, task, rung and proposal, their slots fixed by rung and the
 * proposal's place in its group), so no finished rung job is lost or trained again. `alsoFirst`
 * (pending baselines) trains alongside rung 0.
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
  const groups = new Map(tasks.map((t) => [t, valid.filter((v) => v.row.task === t)]));

  // Stores the rung jobs of every promotion decided so far that has none yet; returns the iteration's rung jobs.
  const store = (): JobRow[] => {
    const existing = rungRowsOf(c).filter((j) => tasks.includes(j.task));
    const add: Parameters<Store['addJobs']>[1] = [];
    for (const [task, group] of groups) {
      const brief = c.brief(task);
      // Slot r·G + i for proposal i's rung r (a store from an older version may hold it: then the next free one).
      const taken = new Set(existing.filter((j) => j.task === task).map((j) => j.slot));
      const addRung = (id: number, r: number): void => {
        const i = group.findIndex((v) => v.row.id === id);
        let slot = r * group.length + i;
        while (taken.has(slot)) slot = Math.max(...taken) + 1;
        taken.add(slot);
        const spec = rungSpec(group[i].row.spec, group[i].spec, brief, shares[r]);
        add.push({ round: c.iteration, slot, task, kind: 'rung', agent: group[i].row.agent, spec, trace: null, rung: r, parentId: id, share: shares[r] });
      };
      let entrants = group.map((v) => v.row.id);
      for (let r = 0; r < shares.length && entrants.length; r++) {
        const rung = existing.filter((j) => j.task === task && j.rung === r);
        // A rung below the top with one entrant decides nothing (its place among the promoted is
        // certain before it trains): the entrant goes on untrained (unless an older store holds its job).
        if (r < shares.length - 1 && entrants.length === 1 && !rung.length) continue;
        for (const id of entrants) if (!rung.some((j) => j.parentId === id)) addRung(id, r);
        if (r === shares.length - 1) break;
        // Rung r + 1's entrants: certain promotions only, and only once rung r's set is final (its size sets rung r + 1's cut).
        const results = entrants.map((id) => {
          const j = rung.find((x) => x.parentId === id);
          return { proposal: id, status: j ? j.status : 'pending', normalized: j ? j.normalized : null };
        });
        const decision = decideRung(results, c.fidelity.eta);
        const next = existing.filter((j) => j.task === task && j.rung === r + 1).map((j) => j.parentId as number);
        // Promotions stored before an interruption stand (they were certain); what is certain now joins them.
        entrants = [...new Set([...next, ...decision.promoted])].sort((a, b) => a - b);
        if (!decision.final) {
          for (const id of entrants) if (!next.includes(id)) addRung(id, r + 1);
          break;
        }
      }
    }
    if (add.length) c.store.addJobs(c.runId, add);
    return rungRowsOf(c).filter((j) => tasks.includes(j.task));
  };

  // Runs every stored pending job; each one that finishes may promote others, which start at once.
  const running = new Map<number, Promise<void>>();
  let failure: { error: unknown } | null = null;
  const first = alsoFirst.filter((b) => b.status === 'pending');
  let baselinesDone = 0;
  const start = (row: JobRow): void => {
    running.set(
      row.id,
      c.runRow(row).then(
        () => {
          running.delete(row.id);
          if (row.kind === 'baseline') baselinesDone += 1;
        },
        (error: unknown) => {
          running.delete(row.id);
          failure ??= { error };
        },
      ),
    );
  };
  for (const b of first) start(b);
  for (;;) {
    // After a failure (an interruption) nothing new starts; what runs is waited for.
    if (!failure) {
      const rows = store();
      for (const row of rows) if (row.status === 'pending' && !running.has(row.id)) start(row);
      c.progress(rows.filter((j) => j.status !== 'pending').length + baselinesDone, rows.length + first.length);
    }
    if (!running.size) break;
    await Promise.race(running.values());
  }
  if (failure) throw (failure as { error: unknown }).error;

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
    list.map((p) => ({ proposal: p.row.id, rungs: p.rungs.map((j, i) => ({ status: j.status, normalized: j.normalized, rung: j.rung ?? i })) })),
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
    // A rung the harness lost (after the shared step's retry) says nothing of the spec: the proposal is unscorable.
    const lost = unscorableReason(last, null);
    out.set(p.row.id, { normalized: paid[i].normalized, full: paid[i].full, computeShare: share, ...(lost === null ? {} : { unscorable: lost }) });
  });
  return out;
}

/**
 * The outer round: a group of proposals from finished jobs to outer rewards, in named phases —
 * ensure baselines → run → confirm → settle. `rrl train` (outer/loop.ts, and through it the
 * experiments) plays each iteration's groups through `Rounds.play`; proposing and the agent's
 * update are the loop's. `rrl serve` (serve/service.ts) plays each request as a round of one
 * group. The rules each phase applies (standing, candidates, confirmation, rewards) are
 * outer/settle.ts's.
 */
import type { TaskBrief } from '../spec/brief.js';
import type { JobRow, Store } from '../store/store.js';
import type { RewardRuleName } from './reward.js';
import { type FidelityConfig, fidelityPaid, successiveHalving } from './fidelity.js';
import {
  type JobReward,
  type PaidOverride,
  type TaskStanding,
  baselineJobs,
  baselineRetries,
  bonusCandidates,
  confirmJobs,
  rewardGroup,
  taskStanding,
} from './settle.js';

/** Thrown when the run stops while a round waits for its jobs: the jobs stay pending for resume. */
export class RoundInterrupted extends Error {
  constructor() {
    super('interrupted');
  }
}

/** What the rounds of one run need: its store, its secret and the step that runs a pending job. */
export interface RoundHost {
  store: Store;
  runId: string;
  secret: string;
  /** The task's baseline spec (trained on the harness's seeds as the task's reference). */
  baselineSpec: (task: string) => unknown;
  /** Runs one pending row to its outcome (outer/pipeline.ts); false when the run was interrupted. */
  runRow: (row: JobRow) => Promise<boolean>;
  /** True once the run stops taking work: a phase that waited for jobs goes no further. */
  stopped: () => boolean;
}

/** One group: proposals on one task, settled together (advantages are normalised within it). */
export interface RoundGroup {
  brief: TaskBrief;
  /** The group's proposals, as stored (pending or finished). */
  rows: JobRow[];
  /** The id the rewards are recorded under (`it3/cars-mpg`, `r12/cars-mpg`). */
  groupId: string;
}

/** How a round is played: the parts where `rrl train` and `rrl serve` differ, as data. */
export interface RoundOptions {
  /** The proposals settled before this round on `task` (the best confirmed score among them is the bar). */
  earlier: (task: string) => JobRow[];
  /** The confirmation jobs rewards may read (default: every `confirm` job of the run). */
  confirmRows?: () => JobRow[];
  /** False: no job is confirmed, so none earns the bonus (measurement runs; default true). */
  confirm?: boolean;
  /** The outer reward rule (default `improvement`). */
  reward?: { rule: RewardRuleName; lambda: number };
  /** Successive halving of the round's proposals (`rrl train --fidelity`), with the iteration the rungs are stored under. */
  fidelity?: { config: FidelityConfig; iteration: number };
  /** Progress of the round's training jobs: `done` of `total`. */
  progress?: (done: number, total: number) => void;
  /** Lines for the operator (retries, confirmations). */
  note?: (message: string) => void;
}

/** A group's rewards: one per proposal, with `unscorable` set where the job is neither paid nor charged. */
export interface SettledGroup {
  brief: TaskBrief;
  rewards: JobReward[];
}

/** A round whose jobs are done: `settle` pays it against the standing at the moment it is called. */
export interface PreparedRound {
  settle(): SettledGroup[];
}

/** The rounds of one run; a row run by two rounds at once trains once. */
export class Rounds {
  private readonly inFlight = new Map<number, Promise<boolean>>();

  constructor(private readonly host: RoundHost) {}

  /** Plays one round: ensure baselines → run → confirm → settle. Throws RoundInterrupted when the run stops. */
  async play(groups: RoundGroup[], options: RoundOptions): Promise<SettledGroup[]> {
    return (await this.prepare(groups, options)).settle();
  }

  /**
   * Plays a round up to its rewards: ensure baselines → run → confirm. The returned `settle` is
   * synchronous, so a caller whose rounds overlap (`rrl serve`) settles and stores in one step
   * and two rounds cannot both take one bonus. Throws RoundInterrupted when the run stops.
   */
  async prepare(groups: RoundGroup[], options: RoundOptions): Promise<PreparedRound> {
    const briefs = groups.map((g) => g.brief);
    this.addBaselines(briefs);
    const paid = await this.runPhase(groups, options);
    await this.retryBaselines(briefs, options);
    await this.confirmPhase(groups, paid, options);
    return { settle: () => this.settlePhase(groups, paid, options) };
  }

  /** Trains the tasks' baselines where they are missing or pending, retrying the machine's failures; throws RoundInterrupted. */
  async ensureBaselines(briefs: TaskBrief[], options: Pick<RoundOptions, 'progress' | 'note'> = {}): Promise<void> {
    this.addBaselines(briefs);
    await this.finishBaselines(briefs, options);
  }

  /** Trains the tasks' pending baseline jobs, retrying the machine's failures (adds none for a task without). */
  async finishBaselines(briefs: TaskBrief[], options: Pick<RoundOptions, 'progress' | 'note'> = {}): Promise<void> {
    await this.runRows(this.pendingBaselines(briefs), options.progress);
    await this.retryBaselines(briefs, options);
  }

  /** Stores the baseline jobs of the tasks that have none yet: their baseline spec on the harness's seeds. */
  addBaselines(briefs: TaskBrief[]): void {
    const { store, runId, secret } = this.host;
    const have = new Set(store.jobs(runId, { kind: 'baseline' }).map((r) => r.task));
    const missing = briefs.filter((b) => !have.has(b.id));
    if (missing.length)
      store.addJobs(
        runId,
        missing.flatMap((b) => baselineJobs(b.id, this.host.baselineSpec(b.id), secret)),
      );
  }

  /** Runs rows to their outcomes, all at once, reporting progress; throws RoundInterrupted when any was interrupted. */
  async runRows(rows: JobRow[], progress?: (done: number, total: number) => void): Promise<void> {
    const pending = rows.filter((r) => r.status === 'pending');
    let done = rows.length - pending.length;
    progress?.(done, rows.length);
    const oks = await Promise.all(
      pending.map(async (row) => {
        const ok = await this.runRow(row);
        if (ok) progress?.((done += 1), rows.length);
        return ok;
      }),
    );
    if (!oks.every(Boolean) || this.host.stopped()) throw new RoundInterrupted();
  }

  /** Runs one row, joining its run when another round already started it. */
  private runRow(row: JobRow): Promise<boolean> {
    let p = this.inFlight.get(row.id);
    if (!p) {
      p = this.host.runRow(row);
      this.inFlight.set(row.id, p);
      const forget = (): void => void this.inFlight.delete(row.id);
      p.then(forget, forget);
    }
    return p;
  }

  private baselinesOf(task: string): JobRow[] {
    return this.host.store.jobs(this.host.runId, { kind: 'baseline' }).filter((r) => r.task === task);
  }

  private pendingBaselines(briefs: TaskBrief[]): JobRow[] {
    const tasks = new Set(briefs.map((b) => b.id));
    return this.host.store.jobs(this.host.runId, { kind: 'baseline' }).filter((r) => r.status === 'pending' && tasks.has(r.task));
  }

  /** Phase run: the pending baselines with the proposals (by successive halving under fidelity); what halving pays. */
  private async runPhase(groups: RoundGroup[], options: RoundOptions): Promise<Map<string, Map<number, PaidOverride>> | null> {
    const baselines = this.pendingBaselines(groups.map((g) => g.brief));
    const proposals = groups.flatMap((g) => g.rows);
    if (!options.fidelity) {
      await this.runRows([...baselines, ...proposals], options.progress);
      return null;
    }
    const { config, iteration } = options.fidelity;
    const briefOf = new Map(groups.map((g) => [g.brief.id, g.brief]));
    const { store, runId } = this.host;
    await successiveHalving(
      {
        store,
        runId,
        iteration,
        fidelity: config,
        brief: (task) => briefOf.get(task)!,
        runRow: async (row) => {
          if (!(await this.runRow(row))) throw new RoundInterrupted();
        },
        progress: (done, total) => options.progress?.(done, total),
      },
      proposals,
      baselines,
    );
    const rungRows = store.jobs(runId, { round: iteration, kind: 'rung' });
    return new Map(groups.map((g) => [g.groupId, fidelityPaid(this.current(g), rungRows, g.brief, config)]));
  }

  /** Phase ensure baselines, after the run: a baseline seed that failed for a reason of the machine is tried again. */
  private async retryBaselines(briefs: TaskBrief[], options: Pick<RoundOptions, 'progress' | 'note'>): Promise<void> {
    for (;;) {
      const retries = briefs.flatMap((b) => baselineRetries(this.baselinesOf(b.id)));
      if (!retries.length) return;
      options.note?.(`retrying ${retries.length} baseline job(s) that failed for a reason of the machine`);
      this.host.store.addJobs(this.host.runId, retries);
      await this.runRows(this.pendingBaselines(briefs), options.progress);
    }
  }

  /** Phase confirm: the bonus candidates are trained again on the harness's seeds before anything is paid. */
  private async confirmPhase(groups: RoundGroup[], paid: Map<string, Map<number, PaidOverride>> | null, options: RoundOptions): Promise<void> {
    const { store, runId, secret } = this.host;
    const confirmRows = (): JobRow[] => this.confirmRows(options);
    const candidates =
      options.confirm === false ? [] : groups.flatMap((g) => bonusCandidates(this.current(g), this.standing(g, options), confirmRows(), paid?.get(g.groupId)));
    const added = confirmJobs(candidates, confirmRows(), secret);
    if (added.length) store.addJobs(runId, added);
    const parents = new Set(groups.flatMap((g) => g.rows.map((r) => r.id)));
    const pending = store.jobs(runId, { kind: 'confirm' }).filter((r) => r.status === 'pending' && r.parentId !== null && parents.has(r.parentId));
    if (!pending.length) return;
    options.note?.(`confirming ${candidates.length} bonus candidate(s) on the harness's seeds (${pending.length} job(s))`);
    await this.runRows(pending, options.progress);
  }

  /** Phase settle: each group's rewards against its task's standing now (synchronous: nothing else settles meanwhile). */
  private settlePhase(groups: RoundGroup[], paid: Map<string, Map<number, PaidOverride>> | null, options: RoundOptions): SettledGroup[] {
    const confirmRows = this.confirmRows(options);
    return groups.map((g) => ({
      brief: g.brief,
      rewards: rewardGroup(this.current(g), g.brief, this.standing(g, options), confirmRows, {
        groupId: g.groupId,
        reward: options.reward,
        paid: paid?.get(g.groupId),
      }),
    }));
  }

  /** The task's standing: its reference over the baseline seeds and the best confirmed score of the earlier proposals. */
  private standing(g: RoundGroup, options: RoundOptions): TaskStanding {
    return taskStanding(this.baselinesOf(g.brief.id), options.earlier(g.brief.id), this.confirmRows(options));
  }

  /** The confirmation jobs rewards may read: the caller's choice, else every `confirm` job of the run. */
  private confirmRows(options: RoundOptions): JobRow[] {
    return options.confirmRows?.() ?? this.host.store.jobs(this.host.runId, { kind: 'confirm' });
  }

  /** The group's proposals as stored now (finished since the group was formed; a group's rows share one round). */
  private current(g: RoundGroup): JobRow[] {
    if (!g.rows.length) return [];
    const ids = new Set(g.rows.map((r) => r.id));
    return this.host.store.jobs(this.host.runId, { round: g.rows[0].round, kind: 'proposal' }).filter((r) => ids.has(r.id));
  }
}

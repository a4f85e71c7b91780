/**
 * The outer RL loop. Each iteration the agent proposes `group` jobs per task; every job
 * is validated, trained by the executor and scored on the hidden evaluation by the scorer
 * (its own worker threads on the harness side, with a time and heap limit: a scorer error is
 * that job's failure); the scores become rewards and the agent is updated. Every step lands in
 * the store before the next depends on it, so a killed run resumes where it stopped.
 */
import { join } from 'node:path';
import type { TaskBrief } from '../spec/brief.js';
import { oneLine } from '../spec/bounds.js';
import { type GuardedProposal, guardProposal } from './guard.js';
import type { Executor } from '../run/executor.js';
import type { ExecutorConfig } from '../run/config.js';
import { Store, type JobRow } from '../store/store.js';
import { ResultCache, engineIdentity } from '../store/cache.js';
import { NoiseStore, noiseFile } from '../store/noise.js';
import { getPublicTask } from '../tasks/briefs.js';
import { type FamilyDraw, registerFamilyTasks } from '../tasks/families/index.js';
import { Rng, mixSeed } from '../util/rng.js';
import { initTf } from '../util/tf.js';
import { Controller } from './agents/controller.js';
import { loadPrior } from './agents/prior.js';
import { RandomAgent } from './agents/random.js';
import { SearchAgent } from './agents/search.js';
import { BaselineAgent } from './agents/baseline.js';
import { OptunaAgent } from './agents/optuna.js';
import { LlmAgent } from './agents/llm/agent.js';
import type { LlmOptions } from './agents/llm/options.js';
import type { Agent, RewardGroup } from './agents/types.js';
import type { RewardRuleName } from './reward.js';
import { Scorer, type ScorerOptions } from './scoring/scorer-pool.js';
import { BusyClock, Evaluator } from './evaluate.js';
import { openRun } from './open-run.js';
import { taskReference } from './noise.js';
import { baselineJobs, baselineRetries, bonusCandidates, confirmJobs, rewardGroup, taskStanding } from './settle.js';
import { pinTaskFingerprints } from './fingerprints.js';
import { type FidelityConfig, fidelityPaid, successiveHalving } from './fidelity.js';
import { type ComputeReport, computeReport } from './compute-report.js';

/** A run's configuration, stored with the run and reused on resume. */
export interface TrainConfig {
  tasks: string[];
  agent: AgentName;
  iterations: number;
  group: number;
  seed: number;
  /** The outer reward rule (default `improvement`) and, for `cost`, the weight of compute. */
  reward?: { rule: RewardRuleName; lambda: number };
  /** Stop proposals' control jobs whose training curve stays flat past half their budget. */
  pruneFlat?: boolean;
  /**
   * False: no job is confirmed on the harness's seeds, so none earns the `improvement` rule's bonus
   * (default true). For measurement runs that compare searches on their jobs' scores (`rrl
   * experiment transfer`'s held-out side): a confirmation changes no job's score, only a reward by
   * the bonus, and costs a training per confirmation seed.
   */
  confirm?: boolean;
  /** The LLM agent's endpoint and sampling settings (agent `llm` only; never an API key). */
  llm?: LlmOptions;
  /** Where jobs run (absent: local worker threads); resume builds the same executor. */
  executor?: ExecutorConfig;
  /** Successive halving within each group (absent: every proposal trains at its full budget). */
  fidelity?: FidelityConfig;
  /** The user's task directory (absolute) the run's tasks come from; resume registers it again. */
  taskDir?: string;
  /** Generated tasks the run uses (family, count, seed); the run registers them, on resume too. */
  families?: FamilyDraw[];
  /** A saved controller prior the controller starts from (agent `controller` only; absolute path; `readPrior`). */
  prior?: string;
  /**
   * Tasks per iteration (absent: every task in every iteration). Each iteration takes the next
   * tasks of a seeded shuffle of `tasks`, a new shuffle per pass, so a run over many generated
   * tasks visits each about equally; baselines run only for the tasks an iteration takes.
   */
  tasksPerIteration?: number;
}

/** The tasks of iteration `it`: all of them, or the next `perIteration` of a seeded shuffle per pass. */
export function iterationTasks(tasks: string[], it: number, seed: number, perIteration?: number): string[] {
  if (!perIteration || perIteration >= tasks.length) return tasks;
  const out = new Set<string>(); // across a pass boundary a task may come twice: it runs once
  for (let k = it * perIteration; k < (it + 1) * perIteration; k++) {
    const pass = Math.floor(k / tasks.length);
    const order = new Rng(mixSeed(seed, 0x7a5c, pass)).permutation(tasks.length);
    out.add(tasks[order[k % tasks.length]]);
  }
  return [...out];
}

/** Progress events for a CLI or dashboard. */
export type LoopEvent =
  | { type: 'phase'; message: string }
  | { type: 'jobs'; iteration: number; total: number; done: number }
  | { type: 'job'; job: JobRow }
  | { type: 'iteration'; iteration: number; meanReward: number; bestNormalized: number | null; meanNormalized: number | null };

/** Summary of a run as `rrl train --json` prints it. */
export interface TrainSummary {
  run: string;
  dir: string;
  jobs: number;
  iterations: { iteration: number; meanReward: number; meanNormalized: number | null; bestNormalized: number | null }[];
  /** Per task: the reference, the mean of its baseline spec over the harness's seeds. */
  baselines: Record<string, number | null>;
  /** Per task: the training noise measured on those seeds (seeds scored, sd, spread) and the evaluation's standard error. */
  noise: Record<string, { mean: number | null; seeds: number; sd: number | null; spread: number | null; evalSe: number }>;
  /** The run's outer reward rule (as stored: a resumed run keeps its own). */
  reward: { rule: RewardRuleName; lambda: number };
  timing: { wallSeconds: number; busySeconds: number; overheadShare: number };
  /** The run's successive halving (null: off). */
  fidelity: FidelityConfig | null;
  /** Compute the run spent, its held-out gain over the baselines, and compute per unit of gain. */
  compute: ComputeReport;
}

/** Records a run's measured references in the noise table; a table that cannot be written is a note, not a failure. */
function recordNoise(file: string | undefined, evalId: string, noise: TrainSummary['noise'], note: (message: string) => void): void {
  let table: NoiseStore | null = null;
  try {
    table = new NoiseStore(file);
    for (const [task, n] of Object.entries(noise)) if (n.seeds > 0) table.put(engineIdentity(), evalId, { task, ...n });
  } catch (err) {
    note(`the noise table ${file ?? noiseFile()} was not updated: ${oneLine((err as Error).message)}`);
  } finally {
    table?.close();
  }
}

/** Creates the agent a config names (`llm` needs `llm`, its endpoint and settings). */
export function makeAgent(name: AgentName, seed: number, llm?: LlmOptions, log?: (message: string) => void): Agent {
  if (name === 'controller') return new Controller({ seed });
  if (name === 'llm') {
    if (!llm) throw new Error('agent "llm" needs its endpoint: a base URL and a model name (--base-url, --model)');
    return new LlmAgent(llm, log);
  }
  if (name === 'random') return new RandomAgent();
  if (name === 'search') return new SearchAgent();
  if (name === 'baseline') return new BaselineAgent();
  const optuna = /^optuna-(tpe|cmaes)(-seeded)?$/.exec(name);
  if (optuna) return new OptunaAgent({ sampler: optuna[1] as 'tpe' | 'cmaes', seeded: Boolean(optuna[2]), seed });
  throw new Error(`unknown agent "${String(name)}"; choose ${AGENTS.join(', ')}`);
}

/** The controller of a run that starts from a prior (`TrainConfig.prior`); any other agent with a prior is an error. */
export async function priorAgent(cfg: Pick<TrainConfig, 'agent' | 'prior' | 'seed'>): Promise<Agent> {
  if (cfg.agent !== 'controller') throw new Error(`a prior sets the controller's weights; agent "${cfg.agent}" takes none`);
  return (await loadPrior(cfg.prior!, cfg.seed)).controller;
}

/** The agents `rrl train --agent` can run. */
export const AGENTS = ['controller', 'random', 'search', 'baseline', 'llm', 'optuna-tpe', 'optuna-cmaes', 'optuna-tpe-seeded', 'optuna-cmaes-seeded'] as const;
export type AgentName = (typeof AGENTS)[number];

/** Runs (or resumes) a training run in `dir` with `executor`. */
export async function train(
  dir: string,
  config: TrainConfig | null,
  executor: Executor,
  options: {
    onEvent?: (e: LoopEvent) => void;
    signal?: AbortSignal;
    timeoutMs?: number;
    agent?: Agent;
    /** Result cache file (default: the run's store); null turns the cache off. */
    cache?: string | null;
    /** Limits of the hidden scoring (time per artifact, scorer heap, scorer threads). */
    scoring?: ScorerOptions;
    /**
     * A scorer pool to share (its threads stay loaded across runs: an experiment's many short runs);
     * the caller closes it. Absent: the run starts its own with `scoring` and closes it.
     */
    scorer?: Scorer;
    /** The noise table the run records its measured references in (default `noiseFile()`); null: none. */
    noiseFile?: string | null;
  } = {},
): Promise<TrainSummary> {
  const emit = options.onEvent ?? (() => {});
  const store = new Store(dir);
  const wall0 = performance.now();
  const clock = new BusyClock();
  let closeCache = (): void => {};
  let scorer: Scorer | null = null;
  try {
    // The secret that scores this run, fixed for its whole life and recorded by its hash.
    const { runId, config: stored, secret, evalId } = openRun(store, dir, config, (message) => emit({ type: 'phase', message }));
    const cfg = stored as TrainConfig;
    for (const d of cfg.families ?? []) registerFamilyTasks(d.family, d.count, d.seed);
    pinTaskFingerprints(store, runId, cfg.tasks); // a resumed run refuses tasks whose files changed
    store.setRunStatus(runId, 'running');
    const allBriefs: TaskBrief[] = cfg.tasks.map((t) => getPublicTask(t).brief);
    const briefOf = (task: string): TaskBrief => allBriefs.find((b) => b.id === task) ?? getPublicTask(task).brief;
    await initTf(); // the embedded controller's network lives on tfjs in this thread
    const ckpt = store.latestCheckpoint(runId);
    // A prior sets the controller's starting weights; a checkpoint (a resumed run) supersedes it.
    const agent =
      options.agent ?? (cfg.prior && !ckpt ? await priorAgent(cfg) : makeAgent(cfg.agent, cfg.seed, cfg.llm, (message) => emit({ type: 'phase', message })));
    if (ckpt) await agent.load(ckpt.state);
    const startIteration = ckpt ? ckpt.iteration + 1 : 0;

    const cache = options.cache === null ? null : new ResultCache(options.cache ?? join(dir, 'store.db'));
    closeCache = () => cache?.close();
    const activeScorer = options.scorer ?? new Scorer(options.scoring);
    if (!options.scorer) scorer = activeScorer;
    const evaluator = new Evaluator({
      dir,
      runId,
      store,
      executor,
      scorer: activeScorer,
      cache,
      secret,
      evalId,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      pruneFlat: cfg.pruneFlat,
      clock,
      log: (message) => emit({ type: 'phase', message }),
    });

    // One job to its outcome; false when the run was interrupted (the job stays pending for resume).
    const runJob = async (row: JobRow): Promise<boolean> => {
      if (!(await evaluator.run(row, briefOf(row.task)))) return false;
      emit({ type: 'job', job: store.job(runId, row.id)! });
      return true;
    };
    const runJobs = async (rows: JobRow[], iteration: number): Promise<void> => {
      const pending = rows.filter((r) => r.status === 'pending');
      let done = rows.length - pending.length;
      emit({ type: 'jobs', iteration, total: rows.length, done });
      await Promise.all(
        pending.map(async (row) => {
          if (!(await runJob(row))) return;
          done += 1;
          emit({ type: 'jobs', iteration, total: rows.length, done });
        }),
      );
      if (options.signal?.aborted) throw new Error('interrupted');
    };

    // The baseline spec of every task on the harness's seeds, once per run (when an iteration first takes the task):
    // the reference the rewards compare to, and the task's training noise.
    const addBaselines = (tasks: TaskBrief[]): void => {
      const have = new Set(store.jobs(runId, { kind: 'baseline' }).map((r) => r.task));
      const missing = tasks.filter((b) => !have.has(b.id));
      if (missing.length)
        store.addJobs(
          runId,
          missing.flatMap((b) => baselineJobs(b.id, getPublicTask(b.id).baseline, secret)),
        );
    };
    const baselinesOf = (task: string): JobRow[] => store.jobs(runId, { kind: 'baseline' }).filter((r) => r.task === task);
    // A baseline seed that failed for a reason of the machine is tried again (BASELINE_ATTEMPTS in all).
    const retryBaselines = async (tasks: TaskBrief[], iteration: number): Promise<void> => {
      for (;;) {
        const retries = tasks.flatMap((b) => baselineRetries(baselinesOf(b.id)));
        if (!retries.length) return;
        emit({ type: 'phase', message: `retrying ${retries.length} baseline job(s) that failed for a reason of the machine` });
        store.addJobs(runId, retries);
        await runJobs(
          store.jobs(runId, { kind: 'baseline' }).filter((r) => r.status === 'pending'),
          iteration,
        );
      }
    };
    if (!cfg.tasksPerIteration) addBaselines(allBriefs);
    const pendingAtStart = store.jobs(runId, { kind: 'baseline' }).filter((r) => r.status === 'pending');
    if (startIteration >= cfg.iterations && pendingAtStart.length) {
      await runJobs(pendingAtStart, -1);
      await retryBaselines(allBriefs, -1);
    }

    for (let it = startIteration; it < cfg.iterations; it++) {
      store.startIteration(runId, it);
      const briefs = iterationTasks(cfg.tasks, it, cfg.seed, cfg.tasksPerIteration).map(briefOf);
      addBaselines(briefs);
      let rows = store.jobs(runId, { iteration: it, kind: 'proposal' });
      if (rows.length === 0) {
        const proposals = [];
        for (const [ti, brief] of briefs.entries()) {
          const history = store
            .jobs(runId, { kind: 'proposal' })
            .filter((j) => j.task === brief.id && j.iteration < it)
            .map((j) => ({ spec: j.spec, reward: j.reward, trace: j.trace, status: j.status, error: j.error }));
          for (let g = 0; g < cfg.group; g++) {
            const rng = new Rng(mixSeed(cfg.seed, it, ti, g));
            // Bounded before anything stores it: a spec or trace over the limits is an invalid job, not a crash.
            let proposal: GuardedProposal;
            try {
              proposal = guardProposal(await agent.propose(brief, { rng, iteration: it, history }));
            } catch (err) {
              const why = err instanceof Error ? err.message : err;
              proposal = { spec: null, trace: null, rejected: { kind: 'agent-error', error: oneLine(`the agent failed to propose: ${oneLine(why)}`) } };
            }
            proposals.push({ iteration: it, slot: g, task: brief.id, kind: 'proposal' as const, agent: agent.name, ...proposal });
          }
        }
        store.addJobs(runId, proposals);
        rows = store.jobs(runId, { iteration: it, kind: 'proposal' });
      }
      const pendingBaselines = store.jobs(runId, { kind: 'baseline' }).filter((r) => r.status === 'pending');
      const andBaselines = pendingBaselines.length ? ` and ${pendingBaselines.length} baseline job(s)` : '';
      emit({ type: 'phase', message: `iteration ${it + 1}/${cfg.iterations}: ${rows.length} job(s)${andBaselines}` });
      if (cfg.fidelity) {
        const halving = {
          store,
          runId,
          iteration: it,
          fidelity: cfg.fidelity,
          brief: briefOf,
          runJob: async (row: JobRow) => {
            if (!(await runJob(row))) throw new Error('interrupted');
          },
          progress: (done: number, total: number) => emit({ type: 'jobs', iteration: it, total, done }),
        };
        await successiveHalving(halving, rows, pendingBaselines);
      } else await runJobs([...pendingBaselines, ...rows], it);
      await retryBaselines(briefs, it);
      rows = store.jobs(runId, { iteration: it, kind: 'proposal' });
      const rungRows = cfg.fidelity ? store.jobs(runId, { iteration: it, kind: 'rung' }) : [];

      // Each task's standing: its reference over the baseline seeds, the best confirmed score before this iteration.
      const earlier = store.jobs(runId, { kind: 'proposal' }).filter((j) => j.iteration < it);
      const settling = briefs.map((brief) => {
        const mine = rows.filter((r) => r.task === brief.id);
        const paid = cfg.fidelity ? fidelityPaid(mine, rungRows, brief, cfg.fidelity) : undefined;
        const standing = taskStanding(
          baselinesOf(brief.id),
          earlier.filter((j) => j.task === brief.id),
          store.jobs(runId, { kind: 'confirm' }),
        );
        return { brief, mine, paid, standing };
      });
      // Candidates for the bonus are trained again on the harness's seeds before anything is paid.
      const candidates =
        cfg.confirm === false ? [] : settling.flatMap((s) => bonusCandidates(s.mine, s.standing, store.jobs(runId, { kind: 'confirm' }), s.paid));
      const added = confirmJobs(candidates, store.jobs(runId, { kind: 'confirm' }), secret);
      if (added.length) store.addJobs(runId, added);
      const pendingConfirm = store.jobs(runId, { iteration: it, kind: 'confirm' }).filter((r) => r.status === 'pending');
      if (pendingConfirm.length) {
        emit({ type: 'phase', message: `confirming ${candidates.length} bonus candidate(s) on the harness's seeds (${pendingConfirm.length} job(s))` });
        await runJobs(pendingConfirm, it);
      }
      const confirmRows = store.jobs(runId, { kind: 'confirm' });

      // Rewards, against the reference and the best confirmed score on the task before this iteration.
      const groups: RewardGroup[] = [];
      const rewards = settling.flatMap(({ brief, mine, paid, standing }) => {
        // A job the harness could not score is neither paid nor charged: no reward, no advantage, not in the update.
        const scored = rewardGroup(mine, brief, standing, confirmRows, `it${it}/${brief.id}`, cfg.reward, paid).filter((s) => s.unscorable === null);
        groups.push({
          brief,
          items: scored
            .filter((s) => s.row.trace !== null)
            .map((s) => ({ trace: s.row.trace, reward: s.reward, advantage: s.advantage, jobId: s.jobId, status: s.row.status, error: s.row.error })),
        });
        return scored.map(({ jobId, reward, advantage, detail, groupId }) => ({ jobId, reward, advantage, detail, groupId }));
      });
      const stats = await agent.update(groups, { runDir: dir, runId, iteration: it, last: it === cfg.iterations - 1 });
      // Scores at the full budget only (with successive halving: the proposals that reached it).
      const norms = rows
        .filter((r) => r.share === null || r.share >= 1)
        .map((r) => r.normalized)
        .filter((v): v is number => v !== null);
      const summary = {
        meanReward: rewards.reduce((a, r) => a + r.reward, 0) / Math.max(1, rewards.length),
        meanNormalized: norms.length ? norms.reduce((a, b) => a + b, 0) / norms.length : null,
        bestNormalized: norms.length ? Math.max(...norms) : null,
        updateStats: stats,
      };
      store.completeIteration(runId, it, rewards, { agent: agent.name, state: await agent.state() }, summary);
      const { meanReward, bestNormalized, meanNormalized } = summary;
      emit({ type: 'iteration', iteration: it, meanReward, bestNormalized, meanNormalized });
    }
    store.setRunStatus(runId, 'finished');
    const noise = Object.fromEntries(
      [...new Set(store.jobs(runId, { kind: 'baseline' }).map((r) => r.task))].map((t) => {
        const ref = taskReference(baselinesOf(t));
        return [t, { mean: ref.mean, seeds: ref.scored, sd: ref.trainSd, spread: ref.spread, evalSe: ref.evalSe }];
      }),
    );
    if (options.noiseFile !== null) recordNoise(options.noiseFile, evalId, noise, (message) => emit({ type: 'phase', message }));
    const wallSeconds = (performance.now() - wall0) / 1000;
    return {
      run: runId,
      dir,
      jobs: store.jobs(runId, { kind: 'proposal' }).length,
      iterations: store
        .iterations(runId)
        .filter((i) => i.status === 'done')
        .map((i) => ({ iteration: i.idx, meanReward: i.meanReward ?? 0, meanNormalized: i.meanNormalized, bestNormalized: i.bestNormalized })),
      baselines: Object.fromEntries(Object.entries(noise).map(([t, n]) => [t, n.mean])),
      noise,
      reward: cfg.reward ?? { rule: 'improvement', lambda: 0.5 },
      timing: { wallSeconds, busySeconds: clock.busy, overheadShare: wallSeconds > 0 ? Math.max(0, 1 - clock.busy / wallSeconds) : 0 },
      fidelity: cfg.fidelity ?? null,
      compute: computeReport(store.jobs(runId)),
    };
  } catch (err) {
    const run = store.getRun();
    if (run && options.signal?.aborted) store.setRunStatus(run.id, 'interrupted');
    throw err;
  } finally {
    closeCache();
    await scorer?.close();
    store.close();
  }
}

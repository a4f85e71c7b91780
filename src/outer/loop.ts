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
import type { CorpusSelection } from '../tasks/corpus/register.js';
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
import { BusyClock, JobPipeline } from './pipeline.js';
import { openRun } from './open-run.js';
import { taskReference } from './noise.js';
import { Rounds, type SettledGroup } from './round.js';
import { pinTaskFingerprints } from './fingerprints.js';
import type { FidelityConfig } from './fidelity.js';
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
  /** Corpus tasks the run uses (`rrl train --corpus`); the command registers them before the run opens, on resume too. */
  corpus?: CorpusSelection[];
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

/** Options of a training run beside its stored configuration. */
export interface TrainOptions {
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
}

/** An open training run: what its iterations share. */
interface LoopRun {
  dir: string;
  runId: string;
  cfg: TrainConfig;
  store: Store;
  agent: Agent;
  rounds: Rounds;
  briefOf: (task: string) => TaskBrief;
  emit: (e: LoopEvent) => void;
}

/** Runs (or resumes) a training run in `dir` with `executor`: the agent proposes, the round settles, the agent learns. */
export async function trainAgent(dir: string, config: TrainConfig | null, executor: Executor, options: TrainOptions = {}): Promise<TrainSummary> {
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
    const { agent, startIteration } = await openAgent(store, runId, cfg, options, emit);

    const cache = options.cache === null ? null : new ResultCache(options.cache ?? join(dir, 'store.db'));
    closeCache = () => cache?.close();
    const activeScorer = options.scorer ?? new Scorer(options.scoring);
    if (!options.scorer) scorer = activeScorer;
    const log = (message: string): void => emit({ type: 'phase', message });
    const { signal, timeoutMs } = options;
    const pipeline = new JobPipeline({
      dir,
      runId,
      store,
      executor,
      scorer: activeScorer,
      cache,
      secret,
      evalId,
      signal,
      timeoutMs,
      pruneFlat: cfg.pruneFlat,
      clock,
      log,
    });
    const runRow = async (row: JobRow): Promise<boolean> => {
      if (!(await pipeline.run(row, briefOf(row.task)))) return false;
      emit({ type: 'job', job: store.job(runId, row.id)! });
      return true;
    };
    const stopped = (): boolean => options.signal?.aborted ?? false;
    const rounds = new Rounds({ store, runId, secret, baselineSpec: (task) => getPublicTask(task).baseline, runRow, stopped });
    const run: LoopRun = { dir, runId, cfg, store, agent, rounds, briefOf, emit };

    // The baseline spec of every task on the harness's seeds, once per run (when an iteration first takes the task).
    if (!cfg.tasksPerIteration) rounds.addBaselines(allBriefs);
    const pendingAtStart = store.jobs(runId, { kind: 'baseline' }).filter((r) => r.status === 'pending');
    if (startIteration >= cfg.iterations && pendingAtStart.length) {
      await rounds.finishBaselines(allBriefs, { progress: (done, total) => emit({ type: 'jobs', iteration: -1, total, done }), note: log });
    }
    for (let it = startIteration; it < cfg.iterations; it++) {
      await iteration(run, it);
    }
    store.setRunStatus(runId, 'finished');
    const noise = noiseOf(store, runId);
    if (options.noiseFile !== null) recordNoise(options.noiseFile, evalId, noise, log);
    return summaryOf(run, noise, { wallSeconds: (performance.now() - wall0) / 1000, busySeconds: clock.busy });
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

/** The run's agent (a given one, a prior's controller or a new one), restored from the latest checkpoint, and the iteration to start at. */
async function openAgent(
  store: Store,
  runId: string,
  cfg: TrainConfig,
  options: TrainOptions,
  emit: (e: LoopEvent) => void,
): Promise<{ agent: Agent; startIteration: number }> {
  await initTf(); // the embedded controller's network lives on tfjs in this thread
  const ckpt = store.latestCheckpoint(runId);
  // A prior sets the controller's starting weights; a checkpoint (a resumed run) supersedes it.
  const agent =
    options.agent ?? (cfg.prior && !ckpt ? await priorAgent(cfg) : makeAgent(cfg.agent, cfg.seed, cfg.llm, (message) => emit({ type: 'phase', message })));
  if (ckpt) await agent.load(ckpt.state);
  return { agent, startIteration: ckpt ? ckpt.iteration + 1 : 0 };
}

/** One iteration in phases: propose → play the round (baselines, run, confirm, settle) → update the agent → record. */
async function iteration(run: LoopRun, it: number): Promise<void> {
  const { store, runId, cfg, rounds, emit } = run;
  store.startIteration(runId, it);
  const briefs = iterationTasks(cfg.tasks, it, cfg.seed, cfg.tasksPerIteration).map(run.briefOf);
  rounds.addBaselines(briefs);
  const rows = await propose(run, briefs, it);
  const pendingBaselines = store.jobs(runId, { kind: 'baseline' }).filter((r) => r.status === 'pending');
  const andBaselines = pendingBaselines.length ? ` and ${pendingBaselines.length} baseline job(s)` : '';
  emit({ type: 'phase', message: `iteration ${it + 1}/${cfg.iterations}: ${rows.length} job(s)${andBaselines}` });
  const earlier = store.jobs(runId, { kind: 'proposal' }).filter((j) => j.round < it);
  const groups = briefs.map((brief) => ({ brief, rows: rows.filter((r) => r.task === brief.id), groupId: `it${it}/${brief.id}` }));
  const settled = await rounds.play(groups, {
    earlier: (task) => earlier.filter((j) => j.task === task),
    confirm: cfg.confirm,
    reward: cfg.reward,
    fidelity: cfg.fidelity ? { config: cfg.fidelity, iteration: it } : undefined,
    progress: (done, total) => emit({ type: 'jobs', iteration: it, total, done }),
    note: (message) => emit({ type: 'phase', message }),
  });
  await update(run, it, settled);
}

/** Phase propose: the iteration's proposals, `group` per task, stored before any runs (a resumed iteration keeps its own). */
async function propose(run: LoopRun, briefs: TaskBrief[], it: number): Promise<JobRow[]> {
  const { store, runId, cfg, agent } = run;
  const existing = store.jobs(runId, { round: it, kind: 'proposal' });
  if (existing.length) return existing;
  const proposals = [];
  for (const [ti, brief] of briefs.entries()) {
    const history = store
      .jobs(runId, { kind: 'proposal' })
      .filter((j) => j.task === brief.id && j.round < it)
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
      proposals.push({ round: it, slot: g, task: brief.id, kind: 'proposal' as const, agent: agent.name, ...proposal });
    }
  }
  store.addJobs(runId, proposals);
  return store.jobs(runId, { round: it, kind: 'proposal' });
}

/** Phase update: the agent learns from the paid jobs (an unscorable one is neither paid nor charged), and the iteration is recorded with its checkpoint. */
async function update(run: LoopRun, it: number, settled: SettledGroup[]): Promise<void> {
  const { store, runId, cfg, agent, emit } = run;
  const groups: RewardGroup[] = [];
  const rewards = settled.flatMap(({ brief, rewards: group }) => {
    const scored = group.filter((s) => s.unscorable === null);
    groups.push({
      brief,
      items: scored
        .filter((s) => s.row.trace !== null)
        .map((s) => ({ trace: s.row.trace, reward: s.reward, advantage: s.advantage, jobId: s.jobId, status: s.row.status, error: s.row.error })),
    });
    return scored.map(({ jobId, reward, advantage, detail, groupId }) => ({ jobId, reward, advantage, detail, groupId }));
  });
  const stats = await agent.update(groups, { runDir: run.dir, runId, iteration: it, last: it === cfg.iterations - 1 });
  // Scores at the full budget only (with successive halving: the proposals that reached it).
  const norms = store
    .jobs(runId, { round: it, kind: 'proposal' })
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

/** Per task: the reference and training noise measured on the harness's seeds. */
function noiseOf(store: Store, runId: string): TrainSummary['noise'] {
  const baselines = store.jobs(runId, { kind: 'baseline' });
  return Object.fromEntries(
    [...new Set(baselines.map((r) => r.task))].map((t) => {
      const ref = taskReference(baselines.filter((r) => r.task === t));
      return [t, { mean: ref.mean, seeds: ref.scored, sd: ref.trainSd, spread: ref.spread, evalSe: ref.evalSe }];
    }),
  );
}

/** The finished run's summary. */
function summaryOf(run: LoopRun, noise: TrainSummary['noise'], time: { wallSeconds: number; busySeconds: number }): TrainSummary {
  const { store, runId, cfg } = run;
  const { wallSeconds, busySeconds } = time;
  return {
    run: runId,
    dir: run.dir,
    jobs: store.jobs(runId, { kind: 'proposal' }).length,
    iterations: store
      .iterations(runId)
      .filter((i) => i.status === 'done')
      .map((i) => ({ iteration: i.idx, meanReward: i.meanReward ?? 0, meanNormalized: i.meanNormalized, bestNormalized: i.bestNormalized })),
    baselines: Object.fromEntries(Object.entries(noise).map(([t, n]) => [t, n.mean])),
    noise,
    reward: cfg.reward ?? { rule: 'improvement', lambda: 0.5 },
    timing: { wallSeconds, busySeconds, overheadShare: wallSeconds > 0 ? Math.max(0, 1 - busySeconds / wallSeconds) : 0 },
    fidelity: cfg.fidelity ?? null,
    compute: computeReport(store.jobs(runId)),
  };
}

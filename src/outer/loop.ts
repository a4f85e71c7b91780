/**
 * The outer RL loop. Each iteration the agent proposes `group` jobs per task; every job
 * is validated, trained by the executor and scored on the hidden evaluation by the scorer
 * (its own worker threads on the harness side, with a time and heap limit: a scorer error is
 * that job's failure); the scores become rewards and the agent is updated. Every step lands in
 * the store before the next depends on it, so a killed run resumes where it stopped.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type { TaskBrief } from '../spec/brief.js';
import { validateSpec } from '../inner/validate.js';
import { oneLine } from '../spec/bounds.js';
import { type GuardedProposal, guardProposal } from './guard.js';
import { type Executor, executorTimeoutMs } from '../run/executor.js';
import type { ExecutorConfig } from '../run/config.js';
import { Store, type JobOutcome, type JobRow } from '../store/store.js';
import { ResultCache, specKey } from '../store/cache.js';
import { getPublicTask } from '../tasks/briefs.js';
import { Rng, mixSeed } from '../util/rng.js';
import { initTf } from '../inner/tf.js';
import { Controller } from './agents/controller.js';
import { RandomAgent } from './agents/random.js';
import { SearchAgent } from './agents/search.js';
import { BaselineAgent } from './agents/baseline.js';
import { LlmAgent, type LlmOptions } from './agents/llm.js';
import type { Agent, RewardGroup } from './agents/types.js';
import { type RewardRuleName, type ScoredEntry, bestEntry, outerReward } from './reward.js';
import { dataForJob } from './score.js';
import { Scorer, type ScorerOptions } from './scorer.js';
import { evalIdentity, evalSecret } from '../tasks/secret.js';

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
  /** The LLM agent's endpoint and sampling settings (agent `llm` only; never an API key). */
  llm?: LlmOptions;
  /** Where jobs run (absent: local worker threads); resume builds the same executor. */
  executor?: ExecutorConfig;
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
  baselines: Record<string, number | null>;
  timing: { wallSeconds: number; busySeconds: number; overheadShare: number };
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
  throw new Error(`unknown agent "${String(name)}"; choose ${AGENTS.join(', ')}`);
}

/** The agents `rrl train --agent` can run. */
export const AGENTS = ['controller', 'random', 'search', 'baseline', 'llm'] as const;
export type AgentName = (typeof AGENTS)[number];

/** The spec with `budget.stopWhenFlat` set (the harness's pruning of hopeless jobs). */
function withFlatStop(spec: unknown): unknown {
  if (!spec || typeof spec !== 'object') return spec;
  const s = spec as { budget?: unknown };
  return { ...s, budget: { ...(s.budget && typeof s.budget === 'object' ? s.budget : {}), stopWhenFlat: true } };
}

/** Share of the task's compute cap a job used (env steps for control, examples for supervised). */
export function computeShare(job: { envSteps: number | null; examples: number | null }, brief: TaskBrief): number {
  if (brief.kind === 'control') return brief.budget.maxEnvSteps > 0 ? (job.envSteps ?? 0) / brief.budget.maxEnvSteps : 0;
  const cap = brief.budget.maxExamples ?? 0;
  return cap > 0 ? (job.examples ?? 0) / cap : 0;
}

/** Tracks wall time during which at least one job trains or is scored. */
class BusyClock {
  private active = 0;
  private since = 0;
  busy = 0;
  enter(): void {
    if (this.active++ === 0) this.since = performance.now();
  }
  leave(): void {
    if (--this.active === 0) this.busy += (performance.now() - this.since) / 1000;
  }
}

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
    const secret = evalSecret();
    const evalId = evalIdentity(secret);
    let run = store.getRun();
    if (!run) {
      if (!config) throw new Error(`no run to resume in ${dir} (store.db has no run)`);
      const id = `run-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${(config.seed >>> 0).toString(16)}`;
      store.createRun(id, config, evalId);
      run = store.getRun()!;
    } else {
      if (config && JSON.stringify(config) !== JSON.stringify(run.config)) {
        emit({ type: 'phase', message: 'resuming with the configuration stored in the run (flags that differ are ignored)' });
      }
      // Scores under another secret are on other held-out episodes and rows: they would not
      // compare with the run's baselines and best scores, so resuming under it is refused.
      if (run.evalIdentity && run.evalIdentity !== evalId) {
        throw new Error(
          `this run was scored with evaluation secret ${run.evalIdentity} but the current secret is ${evalId}; resume with the run's secret (RRL_EVAL_SECRET or RRL_EVAL_SECRET_FILE)`,
        );
      }
      if (!run.evalIdentity) {
        store.setEvalIdentity(run.id, evalId);
        emit({ type: 'phase', message: `this run recorded no evaluation secret; it continues under ${evalId}` });
      }
    }
    const runId = run.id;
    const cfg = run.config as TrainConfig;
    store.setRunStatus(runId, 'running');
    const briefs: TaskBrief[] = cfg.tasks.map((t) => getPublicTask(t).brief);
    await initTf(); // the embedded controller's network lives on tfjs in this thread
    const agent = options.agent ?? makeAgent(cfg.agent, cfg.seed, cfg.llm, (message) => emit({ type: 'phase', message }));
    const ckpt = store.latestCheckpoint(runId);
    if (ckpt) await agent.load(ckpt.state);
    const startIteration = ckpt ? ckpt.iteration + 1 : 0;
    // A run killed during the agent's work after an iteration (e.g. a policy update) finishes it now.
    if (ckpt && agent.afterIteration && ckpt.iteration < cfg.iterations - 1) {
      await agent.afterIteration({ runDir: dir, runId, iteration: ckpt.iteration, last: false });
      store.saveCheckpoint(runId, ckpt.iteration, { agent: agent.name, state: await agent.state() });
    }

    const cache = options.cache === null ? null : new ResultCache(options.cache ?? join(dir, 'store.db'));
    closeCache = () => cache?.close();
    const activeScorer = new Scorer(options.scoring);
    scorer = activeScorer;
    const inFlight = new Map<string, Promise<void>>();

    /** Trains one valid job in the executor and scores it here; null when the run was interrupted. */
    const trainAndScore = async (row: JobRow, spec: unknown, brief: TaskBrief, outDir: string): Promise<JobOutcome | null> => {
      if (!executor.reattaches) rmSync(outDir, { recursive: true, force: true });
      clock.enter();
      try {
        const result = await executor.execute(
          { spec, brief, outDir, data: dataForJob(row.task, spec) },
          { signal: options.signal, timeoutMs: options.timeoutMs ?? executorTimeoutMs(brief.budget.maxWallSeconds) },
        );
        if (options.signal?.aborted) return null;
        if (result.status !== 'succeeded') {
          return { status: 'failed', failureKind: result.kind, error: result.error, wallSeconds: result.cost.wallSeconds ?? null, artifactDir: outDir };
        }
        const { cost } = result.artifact;
        const work = { envSteps: cost.envSteps, examples: cost.examples, wallSeconds: cost.wallSeconds, cpuSeconds: cost.cpuSeconds, artifactDir: outDir, curve: result.curve };
        // Scored in the scorer's own thread: the harness's event loop stays free meanwhile.
        const scored = await activeScorer.score(row.task, outDir, { signal: options.signal, secret });
        if (options.signal?.aborted) return null;
        if (!scored.ok) return { status: 'failed', failureKind: scored.kind, error: scored.error, ...work };
        return { status: 'succeeded', ...work, score: scored.score };
      } finally {
        clock.leave();
      }
    };

    const runJobs = async (rows: JobRow[], iteration: number): Promise<void> => {
      const pending = rows.filter((r) => r.status === 'pending');
      let done = rows.length - pending.length;
      emit({ type: 'jobs', iteration, total: rows.length, done });
      await Promise.all(
        pending.map(async (row) => {
          const brief = briefs.find((b) => b.id === row.task) ?? getPublicTask(row.task).brief;
          const outDir = join(dir, 'jobs', `j${String(row.id).padStart(5, '0')}`);
          const checked = validateSpec(
            cfg.pruneFlat && row.kind === 'proposal' && brief.kind === 'control' ? withFlatStop(row.spec) : row.spec,
            brief,
          );
          if (!checked.ok) {
            store.finishJob(row.id, { status: 'invalid', failureKind: 'invalid', error: checked.error.message });
          } else {
            const key = specKey(checked.spec, evalId);
            // Identical specs in flight at once train only once; the others wait and reuse.
            await inFlight.get(key);
            const hit = cache?.get(key);
            if (hit) {
              store.finishJob(row.id, {
                status: hit.status,
                failureKind: hit.failureKind,
                error: hit.error,
                envSteps: hit.envSteps,
                examples: hit.examples,
                wallSeconds: hit.wallSeconds,
                cpuSeconds: hit.cpuSeconds,
                artifactDir: hit.artifactDir,
                cacheHit: key,
                score: hit.raw !== null && hit.normalized !== null ? { raw: hit.raw, normalized: hit.normalized, stderr: hit.stderr ?? null } : null,
              });
            } else {
              let release = (): void => {};
              inFlight.set(key, new Promise<void>((r) => (release = r)));
              try {
                const outcome = await trainAndScore(row, checked.spec, brief, outDir);
                if (outcome === null) return; // interrupted: the job stays pending for resume
                store.finishJob(row.id, outcome);
                cache?.put({
                  key,
                  task: row.task,
                  status: outcome.status === 'succeeded' ? 'succeeded' : 'failed',
                  failureKind: outcome.failureKind ?? null,
                  error: outcome.error ?? null,
                  envSteps: outcome.envSteps ?? null,
                  examples: outcome.examples ?? null,
                  wallSeconds: outcome.wallSeconds ?? null,
                  cpuSeconds: outcome.cpuSeconds ?? null,
                  raw: outcome.score?.raw ?? null,
                  normalized: outcome.score?.normalized ?? null,
                  stderr: outcome.score?.stderr ?? null,
                  artifactDir: outDir,
                });
              } finally {
                inFlight.delete(key);
                release();
              }
            }
          }
          done += 1;
          emit({ type: 'jobs', iteration, total: rows.length, done });
          emit({ type: 'job', job: store.job(runId, row.id)! });
        }),
      );
      if (options.signal?.aborted) throw new Error('interrupted');
    };

    // The baseline spec of every task, once per run: the reference the rewards compare to.
    let baselineRows = store.jobs(runId, { kind: 'baseline' });
    const missing = briefs.filter((b) => !baselineRows.some((r) => r.task === b.id));
    if (missing.length) {
      store.addJobs(runId, missing.map((b) => ({ iteration: 0, slot: 0, task: b.id, kind: 'baseline' as const, agent: 'baseline', spec: getPublicTask(b.id).baseline, trace: null })));
      baselineRows = store.jobs(runId, { kind: 'baseline' });
    }
    // Baselines train beside the first iteration's proposals (they are needed only for its rewards).
    const baselineRowsNow = (): Map<string, JobRow> => new Map(store.jobs(runId, { kind: 'baseline' }).map((r) => [r.task, r]));
    if (startIteration >= cfg.iterations && baselineRows.some((r) => r.status === 'pending')) await runJobs(baselineRows, -1);

    for (let it = startIteration; it < cfg.iterations; it++) {
      store.startIteration(runId, it);
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
      emit({
        type: 'phase',
        message: `iteration ${it + 1}/${cfg.iterations}: ${rows.length} job(s)${pendingBaselines.length ? ` and ${pendingBaselines.length} baseline job(s)` : ''}`,
      });
      await runJobs([...pendingBaselines, ...rows], it);
      const baselineRow = baselineRowsNow();
      rows = store.jobs(runId, { iteration: it, kind: 'proposal' });

      // Rewards, against the baseline and the best score on the task before this iteration.
      const earlier = store.jobs(runId, { kind: 'proposal' }).filter((j) => j.iteration < it);
      const groups: RewardGroup[] = [];
      const rewards: { jobId: number; reward: number; advantage: number | null; detail: unknown; groupId: string }[] = [];
      for (const brief of briefs) {
        const mine = rows.filter((r) => r.task === brief.id);
        const baseRow = baselineRow.get(brief.id);
        const base = baseRow?.normalized ?? 0;
        // The best score so far and who holds it (the baseline first, so it keeps ties): a bonus
        // must beat it by more than the noise of both scores.
        const holder = bestEntry([
          { jobId: baseRow?.id ?? null, normalized: base, stderr: baseRow?.normalized != null ? baseRow.stderr : null },
          ...earlier
            .filter((j) => j.task === brief.id && j.normalized !== null)
            .map((j): ScoredEntry => ({ jobId: j.id, normalized: j.normalized as number, stderr: j.stderr })),
        ])!;
        const best = holder.normalized;
        const scored = mine.map((r) => ({
          row: r,
          ...outerReward(
            {
              status: r.status as 'succeeded' | 'failed' | 'invalid',
              normalized: r.normalized,
              baseline: base,
              bestSoFar: best,
              stderr: r.stderr,
              bestStderr: holder.stderr,
              computeShare: computeShare(r, brief),
            },
            cfg.reward?.rule,
            cfg.reward?.lambda,
          ),
        }));
        const mean = scored.reduce((a, s) => a + s.reward, 0) / Math.max(1, scored.length);
        const sd = Math.sqrt(scored.reduce((a, s) => a + (s.reward - mean) ** 2, 0) / Math.max(1, scored.length));
        for (const s of scored) {
          rewards.push({
            jobId: s.row.id,
            reward: s.reward,
            advantage: sd > 1e-6 ? (s.reward - mean) / sd : 0,
            groupId: `it${it}/${brief.id}`,
            detail: {
              rule: cfg.reward?.rule ?? 'improvement',
              improvement: s.improvement,
              bonus: s.bonus,
              cost: s.cost,
              baseline: base,
              bestSoFar: best,
              bestJob: holder.jobId,
              bestStderr: holder.stderr,
              stderr: s.row.stderr,
            },
          });
        }
        groups.push({ brief, items: scored.filter((s) => s.row.trace !== null).map((s) => ({ trace: s.row.trace, reward: s.reward })) });
      }
      const stats = await agent.update(groups);
      const norms = rows.map((r) => r.normalized).filter((v): v is number => v !== null);
      const summary = {
        meanReward: rewards.reduce((a, r) => a + r.reward, 0) / Math.max(1, rewards.length),
        meanNormalized: norms.length ? norms.reduce((a, b) => a + b, 0) / norms.length : null,
        bestNormalized: norms.length ? Math.max(...norms) : null,
        updateStats: stats,
      };
      store.completeIteration(runId, it, rewards, { agent: agent.name, state: await agent.state() }, summary);
      if (agent.afterIteration) {
        await agent.afterIteration({ runDir: dir, runId, iteration: it, last: it === cfg.iterations - 1 });
        store.saveCheckpoint(runId, it, { agent: agent.name, state: await agent.state() });
      }
      emit({ type: 'iteration', iteration: it, meanReward: summary.meanReward, bestNormalized: summary.bestNormalized, meanNormalized: summary.meanNormalized });
    }
    store.setRunStatus(runId, 'finished');
    const wallSeconds = (performance.now() - wall0) / 1000;
    return {
      run: runId,
      dir,
      jobs: store.jobs(runId, { kind: 'proposal' }).length,
      iterations: store
        .iterations(runId)
        .filter((i) => i.status === 'done')
        .map((i) => ({ iteration: i.idx, meanReward: i.meanReward ?? 0, meanNormalized: i.meanNormalized, bestNormalized: i.bestNormalized })),
      baselines: Object.fromEntries(store.jobs(runId, { kind: 'baseline' }).map((r) => [r.task, r.normalized])),
      timing: { wallSeconds, busySeconds: clock.busy, overheadShare: wallSeconds > 0 ? Math.max(0, 1 - clock.busy / wallSeconds) : 0 },
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

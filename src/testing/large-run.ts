/**
 * A run store of any size written through the Store API without training anything: for the
 * dashboard's tests and its page-load measurement on a 1,000-job run. Every row has the shape
 * `rrl train` writes (baseline jobs, proposals with scores, rewards and curves, failed and invalid
 * jobs with their reasons, iteration summaries with the agent's update statistics).
 */
import { getPublicTask } from '../tasks/briefs.js';
import { Store } from '../store/store.js';
import { Rng } from '../util/rng.js';
import { arsSpec } from './specs.js';

/** How big a run to write. */
export interface LargeRunOptions {
  tasks?: string[];
  iterations: number;
  /** Proposals per task per iteration. */
  group: number;
  /** Curve points per job (episodic return). */
  curvePoints?: number;
  seed?: number;
}

/** Writes the run into `dir` (a new store); returns its run id and the number of proposals. */
export function writeLargeRun(dir: string, o: LargeRunOptions): { runId: string; proposals: number } {
  const tasks = o.tasks ?? ['cartpole-short', 'iris-species'];
  const rng = new Rng(o.seed ?? 1);
  const store = new Store(dir);
  const runId = 'run-large-1';
  try {
    store.createRun(runId, {
      tasks,
      agent: 'controller',
      iterations: o.iterations,
      group: o.group,
      seed: o.seed ?? 1,
      reward: { rule: 'improvement', lambda: 0.5 },
    });
    const baseIds = store.addJobs(
      runId,
      tasks.map((task) => ({ round: 0, slot: 0, task, kind: 'baseline' as const, agent: 'baseline', spec: getPublicTask(task).baseline, trace: null })),
    );
    baseIds.forEach((id) =>
      store.finishJob(id, { status: 'succeeded', envSteps: 10_000, cpuSeconds: 5, wallSeconds: 6, score: { raw: 100, normalized: 0.4, stderr: 0.02 } }),
    );
    let proposals = 0;
    for (let it = 0; it < o.iterations; it++) {
      store.startIteration(runId, it);
      const jobs = tasks.flatMap((task) =>
        Array.from({ length: o.group }, (_, slot) => {
          const spec = task.startsWith('cartpole')
            ? arsSpec(task, 5000 + 1000 * rng.int(10), rng.int(1e6))
            : { ...getPublicTask(task).baseline, seed: rng.int(1e6) };
          return {
            round: it,
            slot,
            task,
            kind: 'proposal' as const,
            agent: 'controller',
            spec,
            trace: { choice: [rng.int(3), rng.int(3)], logProb: -rng.uniform(1, 5) },
          };
        }),
      );
      const ids = store.addJobs(runId, jobs);
      proposals += ids.length;
      const rewards = ids.map((id, i) => {
        const u = rng.uniform(0, 1);
        const progress = (it + 1) / o.iterations;
        if (u < 0.05) {
          store.finishJob(id, { status: 'invalid', failureKind: 'invalid-spec', error: 'algorithm.stepSize: got 5: must be <=1' });
          return { jobId: id, reward: -1, advantage: -1, detail: { rule: 'improvement', penalty: 'invalid' }, groupId: `it${it}/${jobs[i].task}` };
        }
        if (u < 0.1) {
          store.finishJob(id, {
            status: 'failed',
            failureKind: 'timeout',
            error: 'the job ran past its wall-clock limit of 60 s',
            wallSeconds: 60,
            cpuSeconds: 58,
          });
          return { jobId: id, reward: -1, advantage: -1, detail: { rule: 'improvement', penalty: 'failed' }, groupId: `it${it}/${jobs[i].task}` };
        }
        const normalized = Math.min(1, Math.max(0, 0.3 + 0.5 * progress + rng.uniform(-0.25, 0.25)));
        const n = o.curvePoints ?? 50;
        const curve = Array.from({ length: n }, (_, k) => ({
          name: 'charts/episodic_return',
          step: (k + 1) * 100,
          wallTime: k * 0.01,
          value: 500 * normalized * ((k + 1) / n) + rng.uniform(-10, 10),
        }));
        store.finishJob(id, {
          status: 'succeeded',
          envSteps: 5000 + rng.int(5000),
          cpuSeconds: rng.uniform(1, 4),
          wallSeconds: rng.uniform(1, 5),
          score: { raw: 500 * normalized, normalized, stderr: 0.01 + rng.uniform(0, 0.03) },
          curve,
        });
        return {
          jobId: id,
          reward: normalized - 0.4,
          advantage: 0,
          detail: { rule: 'improvement', improvement: normalized - 0.4 },
          groupId: `it${it}/${jobs[i].task}`,
        };
      });
      const rows = store.jobs(runId, { round: it, kind: 'proposal' });
      const norms = rows.map((r) => r.normalized).filter((v): v is number => v !== null);
      store.completeIteration(
        runId,
        it,
        rewards,
        { agent: 'controller', state: {} },
        {
          meanReward: rewards.reduce((a, r) => a + r.reward, 0) / rewards.length,
          meanNormalized: norms.length ? norms.reduce((a, b) => a + b, 0) / norms.length : null,
          bestNormalized: norms.length ? Math.max(...norms) : null,
          updateStats: { 'agent/entropy': 20 - (10 * it) / o.iterations, 'agent/loss': 0.1 },
        },
      );
    }
    store.setRunStatus(runId, 'finished');
    return { runId, proposals };
  } finally {
    store.close();
  }
}

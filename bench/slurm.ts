/**
 * `npm run bench -- slurm`: the Slurm executor on a single-node cluster of its own.
 * Submit-to-start latency (sbatch, and slurmrestd where installed) and jobs per hour for
 * the same batch of short jobs through the local executor and through Slurm.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Executor, JobResult } from '../src/run/executor.js';
import { LocalExecutor } from '../src/run/local.js';
import { SlurmExecutor } from '../src/run/slurm.js';
import { SlurmCliBackend } from '../src/run/slurm-cli.js';
import { SlurmRestBackend } from '../src/run/slurm-rest.js';
import { getPublicTask } from '../src/tasks/briefs.js';
import { arsSpec } from '../src/testing/specs.js';
import { type SlurmCluster, clusterUnavailable, findBinary, startCluster } from '../src/testing/slurm-cluster.js';
import { num, table } from '../src/cli/format.js';

const log = (s: string): boolean => process.stderr.write(`${s}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Seconds from the submit call to the job's first instruction (a timestamp it writes), `n` times in a row. */
async function latency(cluster: SlurmCluster, dir: string, submit: (script: string, out: string) => Promise<void>, n: number): Promise<number[]> {
  const out: number[] = [];
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) {
    const stamp = join(dir, `start-${i}`);
    const script = `#!/bin/bash\ndate +%s.%N > ${stamp}.tmp && mv ${stamp}.tmp ${stamp}\n`;
    const t0 = Date.now() / 1000;
    await submit(script, join(dir, `out-${i}.txt`));
    while (!existsSync(stamp)) await sleep(20);
    out.push(Number(readFileSync(stamp, 'utf8')) - t0);
  }
  void cluster;
  return out;
}

/** The two batches: tiny ARS jobs (overhead-bound) and short PPO jobs (training-bound). */
const BATCHES = [
  { label: 'ARS, 5,000 env steps', jobs: 8, task: 'cartpole-balance', spec: (i: number): unknown => arsSpec('cartpole-balance', 5000, i + 1) },
  {
    label: 'PPO, 10,000 env steps',
    jobs: 4,
    task: 'cartpole-short',
    spec: (i: number): unknown => ({ ...(getPublicTask('cartpole-short').baseline as object), seed: i + 1 }),
  },
];

/** Runs a batch of jobs at once through an executor; returns the wall seconds and results. */
async function batch(executor: Executor, dir: string, b: (typeof BATCHES)[number]): Promise<{ wallSeconds: number; results: JobResult[] }> {
  const { brief } = getPublicTask(b.task);
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: b.jobs }, (_, i) => executor.execute({ spec: b.spec(i), brief, outDir: join(dir, `j${i}`) })));
  return { wallSeconds: (performance.now() - t0) / 1000, results };
}

/** The Slurm benchmark (starts and stops its own cluster). */
export async function slurm(): Promise<Record<string, unknown>> {
  const why = clusterUnavailable();
  if (why) {
    log(`slurm: SKIPPED: ${why}`);
    return { skipped: why };
  }
  const rest = findBinary('slurmrestd') !== null;
  log('slurm: starting a single-node cluster');
  const cluster = await startCluster({ rest });
  const cpus = Number(execFileSync(findBinary('sinfo')!, ['-h', '-o', '%c'], { env: { ...process.env, ...cluster.env }, encoding: 'utf8' }).trim());
  try {
    const dir = cluster.dir;
    log('slurm: submit-to-start latency through sbatch (10 jobs, one after another)');
    const cli = new SlurmCliBackend(cluster.env);
    const sbatchLatency = await latency(
      cluster,
      join(dir, 'lat-cli'),
      async (script, out) => {
        execFileSync(findBinary('sbatch')!, ['--parsable', `--output=${out}`, '--wrap', script.split('\n')[1]], { env: { ...process.env, ...cluster.env } });
      },
      10,
    );
    let restLatency: number[] | null = null;
    if (rest) {
      log('slurm: submit-to-start latency through slurmrestd (10 jobs)');
      const backend = new SlurmRestBackend({ url: cluster.restUrl!, token: { scontrol: true, env: cluster.env } });
      await backend.apiVersion();
      restLatency = await latency(
        cluster,
        join(dir, 'lat-rest'),
        async (script, out) => {
          await backend.submit({
            name: 'bench',
            script,
            scriptPath: '',
            workDir: dir,
            output: out,
            timeMinutes: 5,
            extraArgs: [],
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
          });
        },
        10,
      );
    }

    const ok = (r: { results: JobResult[] }): number => r.results.filter((x) => x.status === 'succeeded').length;
    const meanJob = (r: { results: JobResult[] }): number =>
      r.results.reduce((a, x) => a + (x.status === 'succeeded' ? x.artifact.cost.wallSeconds : 0), 0) / Math.max(1, ok(r));
    const batches = [];
    const rows: string[][] = [
      ['submit-to-start latency, sbatch (median of 10)', `${num(median(sbatchLatency), 2)} s`],
      ['submit-to-start latency, slurmrestd (median of 10)', restLatency ? `${num(median(restLatency), 2)} s` : 'slurmrestd not installed'],
    ];
    for (const [k, b] of BATCHES.entries()) {
      log(`slurm: ${b.jobs} jobs (${b.label}) through the local executor (${cpus} workers)`);
      const local = new LocalExecutor({ workers: cpus });
      let localRun;
      try {
        localRun = await batch(local, join(dir, `batch-${k}-local`), b);
      } finally {
        await local.close();
      }
      log(`slurm: the same ${b.jobs} jobs through Slurm (${cpus} CPUs, one per job)`);
      const slurmEx = new SlurmExecutor({ pollMs: 250, jobPrefix: 'rrl-bench' }, cli);
      const slurmRun = await batch(slurmEx, join(dir, `batch-${k}-slurm`), b);
      await slurmEx.close();
      const perHour = (r: { wallSeconds: number }): number => (3600 * b.jobs) / r.wallSeconds;
      const entry = {
        batch: b.label,
        jobs: b.jobs,
        local: { succeeded: ok(localRun), wallSeconds: localRun.wallSeconds, jobsPerHour: perHour(localRun), meanJobSeconds: meanJob(localRun) },
        slurm: {
          succeeded: ok(slurmRun),
          wallSeconds: slurmRun.wallSeconds,
          jobsPerHour: perHour(slurmRun),
          meanJobSeconds: meanJob(slurmRun),
          medianQueueSeconds: median(slurmEx.startLatencies),
        },
        slurmOverLocal: perHour(slurmRun) / perHour(localRun),
      };
      batches.push(entry);
      rows.push(
        [
          `${b.label}: ${b.jobs} jobs, local (${cpus} workers)`,
          `${num(localRun.wallSeconds, 1)} s, ${num(entry.local.jobsPerHour, 0)} jobs/h, ${ok(localRun)}/${b.jobs} ok`,
        ],
        [
          `${b.label}: ${b.jobs} jobs, Slurm (${cpus} CPUs)`,
          `${num(slurmRun.wallSeconds, 1)} s, ${num(entry.slurm.jobsPerHour, 0)} jobs/h, ${ok(slurmRun)}/${b.jobs} ok`,
        ],
        [`${b.label}: Slurm / local jobs per hour`, num(entry.slurmOverLocal, 2)],
        [`${b.label}: mean training s per job (local / Slurm)`, `${num(entry.local.meanJobSeconds, 2)} / ${num(entry.slurm.meanJobSeconds, 2)}`],
      );
    }
    const result = {
      cpus,
      latencySeconds: {
        sbatch: { median: median(sbatchLatency), all: sbatchLatency },
        slurmrestd: restLatency && { median: median(restLatency), all: restLatency },
      },
      batches,
    };
    console.log(table(['figure', 'value'], rows));
    return result;
  } finally {
    await cluster.stop();
  }
}

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
import { SlurmCliBackend, SlurmExecutor } from '../src/run/slurm.js';
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

/** Runs a batch of jobs at once through an executor; returns the wall seconds and results. */
async function batch(executor: Executor, dir: string, jobs: number, envSteps: number): Promise<{ wallSeconds: number; results: JobResult[] }> {
  const { brief } = getPublicTask('cartpole-balance');
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: jobs }, (_, i) => executor.execute({ spec: arsSpec('cartpole-balance', envSteps, i + 1), brief, outDir: join(dir, `j${i}`) })));
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
  const jobs = 8;
  const envSteps = 5000;
  try {
    const dir = cluster.dir;
    log('slurm: submit-to-start latency through sbatch (10 jobs, one after another)');
    const cli = new SlurmCliBackend(cluster.env);
    const sbatchLatency = await latency(cluster, join(dir, 'lat-cli'), async (script, out) => {
      execFileSync(findBinary('sbatch')!, ['--parsable', `--output=${out}`, '--wrap', script.split('\n')[1]], { env: { ...process.env, ...cluster.env } });
    }, 10);
    let restLatency: number[] | null = null;
    if (rest) {
      log('slurm: submit-to-start latency through slurmrestd (10 jobs)');
      const backend = new SlurmRestBackend({ url: cluster.restUrl!, token: { scontrol: true, env: cluster.env } });
      await backend.apiVersion();
      restLatency = await latency(cluster, join(dir, 'lat-rest'), async (script, out) => {
        await backend.submit({ name: 'bench', script, scriptPath: '', workDir: dir, output: out, timeMinutes: 5, extraArgs: [], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
      }, 10);
    }

    log(`slurm: ${jobs} ARS jobs of ${envSteps} env steps through the local executor (${cpus} workers)`);
    const local = new LocalExecutor({ workers: cpus });
    let localRun;
    try {
      localRun = await batch(local, join(dir, 'batch-local'), jobs, envSteps);
    } finally {
      await local.close();
    }
    log(`slurm: the same ${jobs} jobs through Slurm (${cpus} CPUs, one per job)`);
    const slurmEx = new SlurmExecutor({ pollMs: 250, jobPrefix: 'rrl-bench' }, cli);
    const slurmRun = await batch(slurmEx, join(dir, 'batch-slurm'), jobs, envSteps);
    await slurmEx.close();
    const ok = (r: { results: JobResult[] }): number => r.results.filter((x) => x.status === 'succeeded').length;
    const perHour = (r: { wallSeconds: number }): number => (3600 * jobs) / r.wallSeconds;
    const meanJob = (r: { results: JobResult[] }): number =>
      r.results.reduce((a, x) => a + (x.status === 'succeeded' ? x.artifact.cost.wallSeconds : 0), 0) / Math.max(1, ok(r));
    const result = {
      cpus,
      latencySeconds: { sbatch: { median: median(sbatchLatency), all: sbatchLatency }, slurmrestd: restLatency && { median: median(restLatency), all: restLatency } },
      batch: {
        jobs,
        envSteps,
        local: { succeeded: ok(localRun), wallSeconds: localRun.wallSeconds, jobsPerHour: perHour(localRun), meanJobSeconds: meanJob(localRun) },
        slurm: { succeeded: ok(slurmRun), wallSeconds: slurmRun.wallSeconds, jobsPerHour: perHour(slurmRun), meanJobSeconds: meanJob(slurmRun), executorStartLatencyMedian: median(slurmEx.startLatencies) },
        slurmOverLocal: perHour(slurmRun) / perHour(localRun),
      },
    };
    console.log(
      table(
        ['figure', 'value'],
        [
          ['submit-to-start latency, sbatch (median of 10)', `${num(result.latencySeconds.sbatch.median, 2)} s`],
          ['submit-to-start latency, slurmrestd (median of 10)', restLatency ? `${num(median(restLatency), 2)} s` : 'slurmrestd not installed'],
          [`local executor: ${jobs} jobs (${cpus} workers)`, `${num(localRun.wallSeconds, 1)} s, ${num(result.batch.local.jobsPerHour, 0)} jobs/h, ${ok(localRun)}/${jobs} ok`],
          [`Slurm: ${jobs} jobs (${cpus} CPUs)`, `${num(slurmRun.wallSeconds, 1)} s, ${num(result.batch.slurm.jobsPerHour, 0)} jobs/h, ${ok(slurmRun)}/${jobs} ok`],
          ['Slurm / local jobs per hour', num(result.batch.slurmOverLocal, 2)],
          ['mean training seconds per job (local / Slurm)', `${num(result.batch.local.meanJobSeconds, 2)} / ${num(result.batch.slurm.meanJobSeconds, 2)}`],
        ],
      ),
    );
    return result;
  } finally {
    await cluster.stop();
  }
}

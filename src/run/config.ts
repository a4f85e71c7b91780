/**
 * Which executor a run uses, as plain data stored with the run, so that `rrl train
 * --resume` rebuilds the same one (tokens are never stored; only where to find them).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from './executor.js';
import { LocalExecutor } from './local.js';
import { SlurmExecutor, type SlurmExecutorOptions, runJobPrefix } from './slurm.js';
import { SlurmCliBackend } from './slurm-cli.js';
import { SlurmRestBackend } from './slurm-rest.js';

/** A Slurm executor's settings (see `rrl train --help`). */
export interface SlurmExecutorConfig
  extends Pick<SlurmExecutorOptions, 'partition' | 'account' | 'timeLimitMinutes' | 'gpus' | 'memoryMb' | 'extraArgs' | 'maxResubmits' | 'pollMs'> {
  kind: 'slurm';
  /** Through slurmrestd instead of the command-line tools. */
  rest?: { url: string; tokenEnv?: string; user?: string };
}

/** Where a run's jobs run. */
export type ExecutorConfig = { kind: 'local' } | SlurmExecutorConfig;

/** Builds the executor a config names for the run in `runDir`. */
export function makeExecutor(
  config: ExecutorConfig | undefined,
  o: { runDir: string; workers?: number; memoryMb?: number; slurmEnv?: Record<string, string> },
): Executor {
  if (!config || config.kind === 'local') return new LocalExecutor({ workers: o.workers, memoryMb: o.memoryMb ?? 2048 });
  if (config.kind !== 'slurm') throw new Error(`executor: unknown kind "${(config as { kind: string }).kind}"; use local or slurm`);
  if (!config.rest) {
    const missing = ['sbatch', 'squeue', 'scancel'].filter((p) => !(process.env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, p))));
    if (missing.length)
      throw new Error(
        `--executor slurm: ${missing.join(', ')} not found on PATH; install Slurm's client tools here, or submit through slurmrestd with --slurm-rest URL`,
      );
  }
  const backend = config.rest
    ? new SlurmRestBackend({
        url: config.rest.url,
        user: config.rest.user,
        token: config.rest.tokenEnv ? { env: config.rest.tokenEnv } : { scontrol: true, env: o.slurmEnv },
      })
    : new SlurmCliBackend(o.slurmEnv);
  return new SlurmExecutor(
    {
      partition: config.partition,
      account: config.account,
      timeLimitMinutes: config.timeLimitMinutes,
      gpus: config.gpus,
      memoryMb: config.memoryMb,
      extraArgs: config.extraArgs,
      maxResubmits: config.maxResubmits,
      pollMs: config.pollMs,
      jobPrefix: runJobPrefix(o.runDir),
    },
    backend,
  );
}

/** The flags that say where and how jobs run (local worker threads or Slurm), shared by `rrl train` and `rrl serve`. */
import { type Command, InvalidArgumentError } from 'commander';
import type { ExecutorConfig, SlurmExecutorConfig } from '../../run/config.js';
import { type FlagValues, flagTable } from './table.js';
import { int, repeatable } from './parse.js';
import { WORKERS_FLAG } from './shared.js';

/** The executor flags. */
export const EXECUTOR_FLAGS = flagTable({
  workers: WORKERS_FLAG,
  jobTimeout: { flag: '--job-timeout <seconds>', help: "per-job wall-clock limit (default: the task's cap)", parse: int(1, 86_400) },
  jobMemory: { flag: '--job-memory <mb>', help: 'per-job heap limit in MB', parse: int(64, 65_536), default: 2048 },
  executor: { flag: '--executor <kind>', help: 'where jobs run: local (worker threads) | slurm (batch jobs on a Slurm cluster)', default: 'local' },
  partition: { flag: '--partition <p>', help: 'slurm: partition' },
  account: { flag: '--account <a>', help: 'slurm: account' },
  timeLimit: {
    flag: '--time-limit <minutes>',
    help: "slurm: time limit per job (default: the job's wall-clock limit plus one minute)",
    parse: int(1, 525_600),
  },
  gpus: { flag: '--gpus <n>', help: 'slurm: GPUs per job', parse: int(0, 64) },
  slurmArg: { flag: '--slurm-arg <arg>', help: 'slurm: an extra sbatch argument, e.g. --slurm-arg=--qos=short (repeatable)', parse: repeatable },
  maxResubmits: {
    flag: '--max-resubmits <n>',
    help: 'slurm: submissions again after NODE_FAIL, PREEMPTED or BOOT_FAIL',
    parse: int(0, 100),
    default: 2,
  },
  slurmRest: { flag: '--slurm-rest <url>', help: 'slurm: submit through slurmrestd at this URL instead of sbatch/squeue' },
  slurmTokenEnv: { flag: '--slurm-token-env <var>', help: 'slurm: environment variable holding the JWT for slurmrestd (default: scontrol token)' },
  pollInterval: { flag: '--poll-interval <ms>', help: 'slurm: how often the queue is polled', parse: int(100, 600_000), default: 2000 },
});

/** The values of the executor flags. */
export type ExecutorFlags = FlagValues<typeof EXECUTOR_FLAGS>;

/** The executor a command's flags name (undefined: local worker threads). */
export function executorConfigFrom(o: ExecutorFlags, cmd: Command): ExecutorConfig | undefined {
  if (o.executor !== 'local' && o.executor !== 'slurm') throw new InvalidArgumentError(`--executor must be local or slurm, got "${o.executor}"`);
  if (o.executor === 'slurm') {
    const slurm: SlurmExecutorConfig = { kind: 'slurm', extraArgs: o.slurmArg ?? [], maxResubmits: o.maxResubmits, pollMs: o.pollInterval };
    if (o.partition) slurm.partition = o.partition;
    if (o.account) slurm.account = o.account;
    if (o.timeLimit) slurm.timeLimitMinutes = o.timeLimit;
    if (o.gpus) slurm.gpus = o.gpus;
    if (cmd.getOptionValueSource('jobMemory') === 'cli') slurm.memoryMb = o.jobMemory;
    if (o.slurmRest) slurm.rest = { url: o.slurmRest, ...(o.slurmTokenEnv ? { tokenEnv: o.slurmTokenEnv } : {}) };
    return slurm;
  }
  return undefined;
}

/** What the Slurm executor needs of a cluster: submit, follow and cancel batch jobs (slurm-cli.ts, slurm-rest.ts). */
/** What the executor asks the cluster to run. */
export interface SubmitRequest {
  /** Job name (the run's prefix and the job directory's name). */
  name: string;
  /** Batch script text and where it was written. */
  script: string;
  scriptPath: string;
  workDir: string;
  /** stdout and stderr of the batch job. */
  output: string;
  partition?: string;
  account?: string;
  /** Slurm time limit in minutes. */
  timeMinutes: number;
  gpus?: number;
  memoryMb?: number;
  /** Extra sbatch arguments, verbatim. */
  extraArgs: string[];
  /** The environment the job starts with (never the harness's evaluation secret). */
  env: Record<string, string>;
}

/** A job as the cluster reports it. */
export interface ClusterJob {
  id: string;
  state: string;
  /** Why it waits, or how it ended, when the cluster says. */
  reason?: string;
  name?: string;
}

/** How an executor talks to a Slurm cluster. */
export interface SlurmBackend {
  readonly name: string;
  /** Submits a batch job and returns its id. */
  submit(req: SubmitRequest): Promise<string>;
  /** The states of these jobs; ids the cluster no longer knows are left out. */
  states(ids: string[]): Promise<Map<string, ClusterJob>>;
  /** Cancels jobs (ignores ids that are already gone). */
  cancel(ids: string[]): Promise<void>;
  /** Live jobs whose name starts with `prefix` (the run's jobs, also those of an earlier harness). */
  live(prefix: string): Promise<ClusterJob[]>;
}

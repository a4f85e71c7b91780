/**
 * The Slurm executor. Each job becomes one batch job: the harness writes the spec, the
 * public brief and (supervised tasks) the training rows into the job's directory on a
 * shared path, submits a generated batch script that runs `rrl job exec` on the node,
 * follows the job with squeue (then sacct, or the job-completion log where accounting is
 * off), and reads the artifact back. Scoring stays on the harness side.
 *
 * The cluster is reached through a `SlurmBackend`: the command-line tools here
 * (`SlurmCliBackend` in `slurm-cli.ts`), or slurmrestd (`slurm-rest.ts`).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ARTIFACT_FILES, type Artifact, type JobCost } from '../spec/artifact.js';
import { jobProcessEnvironment } from '../inner/job-env.js';
import type { JobSpec } from '../spec/schema.js';
import { type Executor, type JobRequest, type JobResult, readCurve, recordFailure } from './executor.js';
import { finalOutcome, isLive, normalizeState } from './slurm-state.js';
import type { ClusterJob, SlurmBackend } from './slurm-backend.js';
import { SlurmCliBackend } from './slurm-cli.js';

/** Options of the Slurm executor. */
export interface SlurmExecutorOptions {
  partition?: string;
  account?: string;
  /** Slurm time limit per job in minutes (default: the job's wall-clock limit, rounded up, plus one). */
  timeLimitMinutes?: number;
  gpus?: number;
  /** Memory per job in MB (also the Node heap limit on the node); default: the site's. */
  memoryMb?: number;
  /** Extra sbatch arguments, e.g. `--qos=short` or `--constraint=a100`. */
  extraArgs?: string[];
  /** Submissions after NODE_FAIL, PREEMPTED or BOOT_FAIL before the job counts as failed (default 2). */
  maxResubmits?: number;
  /** Job name prefix that marks this run's jobs (default `rrl`). */
  jobPrefix?: string;
  /** How often the queue is polled, in ms (default 2000). */
  pollMs?: number;
  /** Jobs the harness keeps submitted at once (the loop's parallelism; default 64). */
  slots?: number;
  /** Node binary on the nodes (default: the one running the harness; the path must exist there). */
  nodeBinary?: string;
  /** recursive-rl's folder on the nodes (default: this one, on a shared path). */
  projectDir?: string;
}

/** The state a job's directory keeps for reattaching after the harness restarts. */
interface JobRecord {
  jobId: string;
  name: string;
  backend: string;
  attempts: { jobId: string; submittedAt: string; state?: string }[];
}

const PROJECT_DIR = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A short, stable job-name prefix for a run directory (same on resume). */
export function runJobPrefix(runDir: string): string {
  return `rrl-${createHash('sha256').update(resolve(runDir)).digest('hex').slice(0, 8)}`;
}

/** Quotes a string for bash. */
function sh(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The batch script of one job: `rrl job exec` on the node, into the job directory. */
export function batchScript(o: {
  name: string;
  node: string;
  project: string;
  dir: string;
  spec: string;
  brief: string;
  data?: string;
  memoryMb?: number;
}): string {
  const heap = o.memoryMb ? ` --max-old-space-size=${Math.max(64, Math.floor(o.memoryMb * 0.85))}` : '';
  return [
    '#!/bin/bash',
    `# recursive-rl job ${o.name}: trains the spec on this node and writes the artifact into the job`,
    '# directory. It never scores: the hidden evaluation runs where the harness is.',
    'set -eu',
    `cd ${sh(o.dir)}`,
    `echo "rrl: job $SLURM_JOB_ID on $(hostname) at $(date -Is)" >&2`,
    `exec ${sh(o.node)}${heap} ${sh(join(o.project, 'bin', 'rrl.js'))} job exec --spec ${sh(o.spec)} --brief ${sh(o.brief)}` +
      `${o.data ? ` --data ${sh(o.data)}` : ''} --out ${sh(o.dir)}`,
    '',
  ].join('\n');
}

/**
 * The environment passed to batch jobs: the harness's, without secrets or the harness's own
 * Slurm job, with `HOME` and the XDG directories under `home` (the job's `slurm/home`, made here
 * on the shared file system), never the user's.
 */
export function slurmJobEnvironment(home: string): Record<string, string> {
  return Object.fromEntries(Object.entries(jobProcessEnvironment(home)).filter(([k]) => !k.startsWith('SLURM_JOB') && k !== 'SLURM_CONF_SERVER'));
}

/**
 * Coalesces the state queries of all jobs in flight into one cluster call per poll, so a
 * run with a hundred jobs asks squeue once, not a hundred times.
 */
class StatePoller {
  private wanted = new Set<string>();
  private batch: Promise<Map<string, ClusterJob>> | null = null;
  constructor(private readonly backend: SlurmBackend) {}

  /** The state of one job at the next poll (undefined: the cluster no longer knows it). */
  async get(id: string): Promise<ClusterJob | undefined> {
    this.wanted.add(id);
    if (!this.batch) {
      this.batch = new Promise((r) => setImmediate(r)).then(async () => {
        const ids = [...this.wanted];
        this.wanted.clear();
        this.batch = null;
        return this.backend.states(ids);
      });
    }
    const batch = this.batch;
    return (await batch).get(id);
  }
}

/** Runs jobs as Slurm batch jobs; see the module comment. */
export class SlurmExecutor implements Executor {
  readonly name: string;
  readonly slots: number;
  /** Jobs left in their directory can be picked up again by a new harness (resume). */
  readonly reattaches = true;
  private readonly options: Required<Pick<SlurmExecutorOptions, 'maxResubmits' | 'jobPrefix' | 'pollMs' | 'nodeBinary' | 'projectDir'>> & SlurmExecutorOptions;
  private readonly poller: StatePoller;
  private readonly tracked = new Set<string>();
  private cancelling: Promise<void> | null = null;
  private cancelledAll = false;
  /** Submit-to-start latencies (seconds) of the jobs this executor saw start (benchmarks). */
  readonly startLatencies: number[] = [];

  /** An executor on `backend` (default: the command-line tools). */
  constructor(
    options: SlurmExecutorOptions = {},
    readonly backend: SlurmBackend = new SlurmCliBackend(),
  ) {
    this.options = {
      maxResubmits: 2,
      jobPrefix: 'rrl',
      pollMs: 2000,
      nodeBinary: process.execPath,
      projectDir: PROJECT_DIR,
      // Unset fields keep their defaults (an explicit undefined would erase them).
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    };
    if (!/^[A-Za-z0-9._-]+$/.test(this.options.jobPrefix))
      throw new Error(`jobPrefix: "${this.options.jobPrefix}" may hold only letters, digits, ".", "_" and "-"`);
    this.name = `slurm-${backend.name}`;
    this.slots = options.slots ?? 64;
    this.poller = new StatePoller(backend);
  }

  /** Submits the job (or reattaches to the one its directory names), follows it, reads the artifact back. */
  async execute(req: JobRequest, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<JobResult> {
    const t0 = performance.now();
    const failed = (kind: string, error: string): JobResult => {
      recordFailure(req.outDir, kind, error);
      return { status: 'failed', kind, error, cost: { wallSeconds: (performance.now() - t0) / 1000 } };
    };
    try {
      return await this.follow(req, options, failed);
    } catch (err) {
      if (this.cancelledAll || options.signal?.aborted) return failed('cancelled', 'cancelled: the run was interrupted before the job was submitted');
      return failed('error', `slurm: ${(err as Error).message}`);
    }
  }

  private async follow(
    req: JobRequest,
    options: { signal?: AbortSignal; timeoutMs?: number },
    failed: (kind: string, error: string) => JobResult,
  ): Promise<JobResult> {
    const dir = resolve(req.outDir);
    const slurmDir = join(dir, 'slurm');
    const recordFile = join(slurmDir, 'job.json');
    const name = `${this.options.jobPrefix}-${basename(dir)}`;
    let record = this.readRecord(recordFile);
    let current: ClusterJob | undefined;
    if (record) {
      current = await this.poller.get(record.jobId);
      if (current && isLive(current.state)) {
        // Resume: the job is still queued or running; follow it instead of submitting again.
      } else if ((!current || finalOutcome(current.state).completed) && this.artifactSucceeded(dir)) {
        // It finished while no harness was watching (the cluster may have forgotten it): its artifact is complete.
        return this.succeeded(dir);
      } else record = null;
    }
    if (!record) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(slurmDir, { recursive: true });
      record = { jobId: '', name, backend: this.backend.name, attempts: [] };
      await this.submit(req, dir, record, recordFile, options.timeoutMs);
      current = undefined;
    }
    this.tracked.add(record.jobId);
    let startedAt: number | null = null;
    let submittedAt = Date.parse(record.attempts.at(-1)?.submittedAt ?? '') || Date.now();
    let misses = 0;
    try {
      for (;;) {
        if (options.signal?.aborted || this.cancelledAll) {
          await this.backend.cancel([record.jobId]);
          return failed('cancelled', 'cancelled: the run was interrupted (scancel)');
        }
        if (current === undefined) {
          await sleep(this.options.pollMs);
          current = await this.poller.get(record.jobId);
        }
        const job: ClusterJob | undefined = current;
        current = undefined;
        if (!job) {
          // Gone from the queue and from the records: trust the artifact if it is there.
          if (++misses < 3) continue;
          if (this.artifactSucceeded(dir)) return this.succeeded(dir);
          return failed('lost', `slurm job ${record.jobId} is no longer known to the cluster and left no artifact (${this.logTail(record.jobId, slurmDir)})`);
        }
        misses = 0;
        const state = normalizeState(job.state);
        if (state === 'RUNNING' && startedAt === null) {
          startedAt = Date.now();
          this.startLatencies.push((startedAt - submittedAt) / 1000);
        }
        if (isLive(state)) {
          if (startedAt !== null && options.timeoutMs !== undefined && Date.now() - startedAt > options.timeoutMs) {
            await this.backend.cancel([record.jobId]);
            return failed('timeout', `the job exceeded its wall-clock limit of ${options.timeoutMs / 1000} s (slurm job ${record.jobId} cancelled)`);
          }
          continue;
        }
        const outcome = finalOutcome(state);
        record.attempts.at(-1)!.state = state;
        this.writeRecord(recordFile, record);
        if (outcome.completed) {
          if (this.artifactSucceeded(dir)) return this.succeeded(dir);
          const own = this.statusError(dir);
          return failed(
            own?.kind ?? 'error',
            own?.error ?? `slurm job ${record.jobId} completed but left no artifact (${this.logTail(record.jobId, slurmDir)})`,
          );
        }
        if (outcome.resubmit && record.attempts.length <= this.options.maxResubmits) {
          this.tracked.delete(record.jobId);
          this.clearArtifact(dir);
          await this.submit(req, dir, record, recordFile, options.timeoutMs);
          this.tracked.add(record.jobId);
          startedAt = null;
          submittedAt = Date.now();
          continue;
        }
        const own = outcome.kind === 'error' ? this.statusError(dir) : null;
        const ids = record.attempts.map((a) => a.jobId).join(', ');
        const tries = record.attempts.length > 1 ? ` after ${record.attempts.length} submissions (slurm jobs ${ids})` : ` (slurm job ${record.jobId})`;
        return failed(
          own?.kind ?? outcome.kind,
          own?.error ?? `${outcome.reason}${tries}${job.reason && job.reason !== 'None' ? `: ${job.reason}` : ''}; ${this.logTail(record.jobId, slurmDir)}`,
        );
      }
    } finally {
      this.tracked.delete(record.jobId);
    }
  }

  /** Writes the inputs and the batch script, submits, and records the job id in the job directory. */
  private async submit(req: JobRequest, dir: string, record: JobRecord, recordFile: string, timeoutMs?: number): Promise<void> {
    if (this.cancelledAll) throw new Error('the executor was cancelled');
    const slurmDir = join(dir, 'slurm');
    const spec = join(slurmDir, 'spec.json');
    const brief = join(slurmDir, 'brief.json');
    const data = req.data ? join(slurmDir, 'data.json') : undefined;
    writeFileSync(spec, JSON.stringify(req.spec));
    writeFileSync(brief, JSON.stringify(req.brief));
    if (data) writeFileSync(data, JSON.stringify(req.data));
    const scriptPath = join(slurmDir, 'job.sh');
    const script = batchScript({
      name: record.name,
      node: this.options.nodeBinary,
      project: this.options.projectDir,
      dir,
      spec,
      brief,
      data,
      memoryMb: this.options.memoryMb,
    });
    writeFileSync(scriptPath, script, { mode: 0o755 });
    const limitMs = timeoutMs ?? req.brief.budget.maxWallSeconds * 1000;
    const id = await this.backend.submit({
      name: record.name,
      script,
      scriptPath,
      workDir: dir,
      output: join(slurmDir, 'slurm-%j.out'),
      partition: this.options.partition,
      account: this.options.account,
      timeMinutes: this.options.timeLimitMinutes ?? Math.ceil(limitMs / 60_000) + 1,
      gpus: this.options.gpus,
      memoryMb: this.options.memoryMb,
      extraArgs: this.options.extraArgs ?? [],
      env: slurmJobEnvironment(join(slurmDir, 'home')),
    });
    record.jobId = id;
    record.attempts.push({ jobId: id, submittedAt: new Date().toISOString() });
    this.writeRecord(recordFile, record);
    if (this.cancelledAll) await this.backend.cancel([id]);
  }

  private readRecord(file: string): JobRecord | null {
    if (!existsSync(file)) return null;
    try {
      const r = JSON.parse(readFileSync(file, 'utf8')) as JobRecord;
      return r.jobId && r.backend === this.backend.name ? r : null;
    } catch {
      return null;
    }
  }

  /** Writes the record atomically (a new file renamed over the old): a reader never sees half of it. */
  private writeRecord(file: string, record: JobRecord): void {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(record, null, 2));
    renameSync(tmp, file);
  }

  /** Removes what an earlier attempt wrote, keeping the inputs and the Slurm logs. */
  private clearArtifact(dir: string): void {
    for (const f of readdirSync(dir)) if (f !== 'slurm') rmSync(join(dir, f), { recursive: true, force: true });
  }

  private status(
    dir: string,
  ): { status?: string; kind?: string; error?: string; stopReason?: string; updates?: number; trainReturn?: number | null; backend?: string } | null {
    const p = join(dir, ARTIFACT_FILES.status);
    if (!existsSync(p)) return null;
    try {
      return JSON.parse(readFileSync(p, 'utf8'));
    } catch {
      return null;
    }
  }

  private artifactSucceeded(dir: string): boolean {
    return this.status(dir)?.status === 'succeeded' && existsSync(join(dir, ARTIFACT_FILES.cost));
  }

  private statusError(dir: string): { kind: string; error: string } | null {
    const s = this.status(dir);
    return s?.status === 'failed' && s.error ? { kind: s.kind ?? 'error', error: s.error } : null;
  }

  /** The artifact the node wrote, read back. */
  private succeeded(dir: string): JobResult {
    const s = this.status(dir)!;
    const cost = JSON.parse(readFileSync(join(dir, ARTIFACT_FILES.cost), 'utf8')) as JobCost;
    const specFile = join(dir, ARTIFACT_FILES.spec);
    const spec = (
      existsSync(specFile) ? JSON.parse(readFileSync(specFile, 'utf8')) : JSON.parse(readFileSync(join(dir, 'slurm', 'spec.json'), 'utf8'))
    ) as JobSpec;
    const artifact: Artifact = {
      status: 'succeeded',
      dir,
      spec,
      cost,
      updates: s.updates ?? 0,
      stopReason: s.stopReason ?? 'budget',
      trainReturn: s.trainReturn ?? null,
      backend: s.backend ?? 'unknown',
    };
    return { status: 'succeeded', artifact, curve: readCurve(dir) };
  }

  /** The last lines of a batch job's output, for failure messages. */
  private logTail(jobId: string, slurmDir: string): string {
    const p = join(slurmDir, `slurm-${jobId}.out`);
    if (!existsSync(p)) return 'no batch output';
    const lines = readFileSync(p, 'utf8').trim().split('\n').filter(Boolean).slice(-3);
    return lines.length ? `batch output: ${lines.join(' | ').slice(0, 400)}` : 'empty batch output';
  }

  /** Cancels every job of the run: those followed here and any other live job with the run's prefix. */
  cancelAll(): void {
    this.cancelledAll = true;
    const ids = [...this.tracked];
    this.cancelling = (async () => {
      try {
        await this.backend.cancel(ids);
        const others = (await this.backend.live(`${this.options.jobPrefix}-`)).map((j) => j.id).filter((id) => !ids.includes(id));
        if (others.length) await this.backend.cancel(others);
      } catch {
        /* best effort; close() reports nothing */
      }
    })();
  }

  /** Waits for cancellations in progress; the jobs of a run that was not cancelled keep running. */
  async close(): Promise<void> {
    await this.cancelling;
  }
}

/**
 * The Slurm executor's backend through the command-line tools: sbatch to submit, squeue then
 * sacct (or the job-completion log where accounting is off) to follow, scancel to cancel.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { ClusterJob, SlurmBackend, SubmitRequest } from './slurm-backend.js';
import { isLive, normalizeState } from './slurm-state.js';

const run = promisify(execFile);

/** Talks to Slurm through sbatch, squeue, sacct, scancel and scontrol. */
export class SlurmCliBackend implements SlurmBackend {
  readonly name = 'cli';
  private jobCompLog: string | null | undefined;

  /** Clients run with `env` merged into this process's environment (e.g. SLURM_CONF). */
  constructor(private readonly env: Record<string, string> = {}) {}

  private async cmd(program: string, args: string[], env?: Record<string, string>): Promise<string> {
    try {
      const { stdout } = await run(program, args, { env: { ...(env ?? process.env), ...this.env }, maxBuffer: 16 * 1024 * 1024, timeout: 60_000 });
      return stdout;
    } catch (err) {
      const e = err as Error & { stderr?: string; code?: string | number };
      if (e.code === 'ENOENT') throw new Error(`${program} is not installed or not on PATH`);
      throw new Error(`${program} ${args.join(' ')} failed: ${(e.stderr ?? e.message).trim().split('\n').slice(-2).join(' ')}`);
    }
  }

  /** `sbatch --parsable`; the options go on the command line, extra ones verbatim after them. */
  async submit(req: SubmitRequest): Promise<string> {
    const args = [
      '--parsable',
      `--job-name=${req.name}`,
      `--chdir=${req.workDir}`,
      `--output=${req.output}`,
      '--no-requeue',
      '--ntasks=1',
      '--cpus-per-task=1',
      `--time=${req.timeMinutes}`,
      '--export=ALL',
    ];
    if (req.partition) args.push(`--partition=${req.partition}`);
    if (req.account) args.push(`--account=${req.account}`);
    if (req.gpus) args.push(`--gpus=${req.gpus}`);
    if (req.memoryMb) args.push(`--mem=${req.memoryMb}M`);
    args.push(...req.extraArgs, req.scriptPath);
    const out = (await this.cmd('sbatch', args, req.env)).trim();
    const id = out.split(';')[0].trim();
    if (!/^\d+$/.test(id)) throw new Error(`sbatch printed "${out}" instead of a job id`);
    return id;
  }

  /** squeue (live and recently finished jobs), then sacct, then the job-completion log. */
  async states(ids: string[]): Promise<Map<string, ClusterJob>> {
    const out = new Map<string, ClusterJob>();
    if (!ids.length) return out;
    for (const j of await this.squeue(ids)) out.set(j.id, j);
    let missing = ids.filter((id) => !out.has(id));
    if (missing.length) {
      for (const j of await this.sacct(missing)) out.set(j.id, j);
      missing = missing.filter((id) => !out.has(id));
    }
    if (missing.length) for (const j of await this.jobComp(missing)) out.set(j.id, j);
    return out;
  }

  private async squeue(ids: string[]): Promise<ClusterJob[]> {
    const parse = (s: string): ClusterJob[] =>
      s
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [id, state, reason, name] = l.split('|');
          return { id: id.trim(), state: state.trim(), reason: reason?.trim(), name: name?.trim() };
        });
    const fmt = ['-h', '--states=all', '-o', '%i|%T|%r|%j'];
    try {
      return parse(await this.cmd('squeue', [...fmt, `--jobs=${ids.join(',')}`]));
    } catch {
      // One unknown id makes squeue fail for all of them: ask one by one.
      if (ids.length === 1) return [];
      const all: ClusterJob[] = [];
      for (const id of ids) all.push(...(await this.squeue([id])));
      return all;
    }
  }

  private async sacct(ids: string[]): Promise<ClusterJob[]> {
    try {
      const s = await this.cmd('sacct', ['-n', '-X', '-P', '-o', 'JobID,State,ExitCode,JobName', `--jobs=${ids.join(',')}`]);
      return s
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [id, state, exit, name] = l.split('|');
          return { id, state: normalizeState(state), reason: exit && exit !== '0:0' ? `exit code ${exit}` : undefined, name };
        })
        .filter((j) => ids.includes(j.id));
    } catch {
      return []; // accounting is off (no slurmdbd)
    }
  }

  /** Finished jobs from the job-completion log (JobCompType=jobcomp/filetxt) where accounting is off. */
  private async jobComp(ids: string[]): Promise<ClusterJob[]> {
    if (this.jobCompLog === undefined) {
      try {
        const conf = await this.cmd('scontrol', ['show', 'config']);
        const type = /^JobCompType\s*=\s*(\S+)/m.exec(conf)?.[1];
        const loc = /^JobCompLoc\s*=\s*(\S+)/m.exec(conf)?.[1];
        this.jobCompLog = type === 'jobcomp/filetxt' && loc ? loc : null;
      } catch {
        this.jobCompLog = null;
      }
    }
    if (!this.jobCompLog || !existsSync(this.jobCompLog)) return [];
    const found = new Map<string, ClusterJob>();
    for (const line of readFileSync(this.jobCompLog, 'utf8').split('\n')) {
      const id = /^JobId=(\d+)/.exec(line)?.[1];
      if (!id || !ids.includes(id)) continue;
      const state = /JobState=(\S+)/.exec(line)?.[1] ?? 'UNKNOWN';
      const exit = /ExitCode=(\S+)/.exec(line)?.[1];
      found.set(id, { id, state: normalizeState(state), reason: exit && exit !== '0:0' ? `exit code ${exit}` : undefined, name: /Name=(\S+)/.exec(line)?.[1] });
    }
    return [...found.values()];
  }

  async cancel(ids: string[]): Promise<void> {
    if (!ids.length) return;
    try {
      await this.cmd('scancel', ids);
    } catch {
      for (const id of ids) await this.cmd('scancel', [id]).catch(() => {});
    }
  }

  async live(prefix: string): Promise<ClusterJob[]> {
    const s = await this.cmd('squeue', ['-h', '--me', '-o', '%i|%T|%r|%j']);
    return s
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [id, state, reason, name] = l.split('|');
        return { id, state, reason, name };
      })
      .filter((j) => j.name?.startsWith(prefix) && isLive(j.state));
  }
}

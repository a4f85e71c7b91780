/**
 * The Slurm executor's backend for slurmrestd: the same batch jobs, submitted and followed
 * through the REST API with a JWT. The API version is negotiated: the daemon's OpenAPI
 * document lists the versions it serves, and the newest one with the job endpoints is used.
 */
import { execFile } from 'node:child_process';
import { userInfo } from 'node:os';
import { promisify } from 'node:util';
import type { ClusterJob, SlurmBackend, SubmitRequest } from './slurm-backend.js';
import { isLive, normalizeState } from './slurm-state.js';

const run = promisify(execFile);

/** Where the JWT comes from: a fixed value, an environment variable, or `scontrol token`. */
export type TokenSource = { value: string } | { env: string } | { scontrol: true; env?: Record<string, string> };

/** Options of the REST backend. */
export interface SlurmRestOptions {
  /** slurmrestd's base URL, e.g. http://head:6820. */
  url: string;
  token: TokenSource;
  /** The user the token belongs to (default: this process's user). */
  user?: string;
  /** Force an API version (e.g. v0.0.38) instead of negotiating. */
  version?: string;
}

/** Compares "v0.0.38"-style versions numerically. */
export function compareVersions(a: string, b: string): number {
  const pa = a.replace(/^v/, '').split('.').map(Number);
  const pb = b.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d) return d;
  }
  return 0;
}

/**
 * The newest Slurm API version whose submit, job and jobs endpoints the OpenAPI document's
 * paths all list; throws, naming what was offered, when none does.
 */
export function negotiateVersion(paths: string[]): string {
  const offered = new Set<string>();
  for (const p of paths) {
    const m = /^\/slurm\/(v\d+\.\d+\.\d+)\/job\/submit$/.exec(p);
    if (m) offered.add(m[1]);
  }
  const usable = [...offered].filter((v) => paths.includes(`/slurm/${v}/jobs`) && paths.some((p) => p.startsWith(`/slurm/${v}/job/{`)));
  usable.sort(compareVersions);
  if (!usable.length) {
    const seen = [...new Set(paths.map((p) => /^\/slurm\/(v[\d.]+)\//.exec(p)?.[1]).filter(Boolean))];
    throw new Error(`slurmrestd offers no Slurm API with job submit, job and jobs endpoints (versions seen: ${seen.join(', ') || 'none'})`);
  }
  return usable.at(-1)!;
}

/** Submits and follows batch jobs through slurmrestd. */
export class SlurmRestBackend implements SlurmBackend {
  readonly name = 'rest';
  private version: string | null;
  private token: { value: string; at: number } | null = null;
  private readonly url: string;
  private readonly user: string;

  /** A backend for the daemon at `options.url`. */
  constructor(private readonly options: SlurmRestOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.user = options.user ?? userInfo().username;
    this.version = options.version ?? null;
  }

  /** The API version in use (negotiated on first use). */
  async apiVersion(): Promise<string> {
    if (!this.version) {
      let doc: { paths?: Record<string, unknown> } | null = null;
      const errors: string[] = [];
      for (const p of ['/openapi/v3', '/openapi.json', '/openapi']) {
        try {
          const r = await fetch(this.url + p, { headers: await this.headers() });
          if (r.ok) {
            doc = (await r.json()) as { paths?: Record<string, unknown> };
            break;
          }
          errors.push(`${p}: HTTP ${r.status}`);
        } catch (err) {
          errors.push(`${p}: ${(err as Error).message}`);
        }
      }
      if (!doc?.paths) throw new Error(`cannot read slurmrestd's OpenAPI document at ${this.url} (${errors.join('; ')})`);
      this.version = negotiateVersion(Object.keys(doc.paths));
    }
    return this.version;
  }

  private async currentToken(): Promise<string> {
    const src = this.options.token;
    if ('value' in src) return src.value;
    if ('env' in src && typeof src.env === 'string') {
      const v = process.env[src.env];
      if (!v) throw new Error(`the environment variable ${src.env} holds no Slurm JWT`);
      return v.replace(/^SLURM_JWT=/, '').trim();
    }
    // scontrol token: valid 30 minutes by default; fetch a new one every 10.
    if (!this.token || Date.now() - this.token.at > 600_000) {
      const env = 'scontrol' in src ? src.env : undefined;
      const { stdout } = await run('scontrol', ['token'], { env: { ...process.env, ...env } });
      const value = /SLURM_JWT=(\S+)/.exec(stdout)?.[1];
      if (!value) throw new Error(`scontrol token printed no SLURM_JWT (${stdout.trim().slice(0, 100)})`);
      this.token = { value, at: Date.now() };
    }
    return this.token.value;
  }

  private async headers(): Promise<Record<string, string>> {
    return { 'X-SLURM-USER-NAME': this.user, 'X-SLURM-USER-TOKEN': await this.currentToken(), 'Content-Type': 'application/json', Accept: 'application/json' };
  }

  private async call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const v = await this.apiVersion();
    const r = await fetch(`${this.url}/slurm/${v}${path}`, {
      method,
      headers: await this.headers(),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json: Record<string, unknown> = {};
    try {
      json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      json = { errors: [{ error: text.slice(0, 200) }] };
    }
    return { status: r.status, json };
  }

  private static errors(json: Record<string, unknown>): string {
    const errs = (json.errors as { error?: string; description?: string; error_number?: number }[] | undefined) ?? [];
    return errs
      .map((e) => [e.description, e.error].filter(Boolean).join(': '))
      .filter(Boolean)
      .join('; ');
  }

  /** POST job/submit with the script and the job's properties in the version's encoding. */
  async submit(req: SubmitRequest): Promise<string> {
    if (req.extraArgs.length)
      throw new Error(
        `extra sbatch arguments (${req.extraArgs.join(' ')}) cannot be passed through slurmrestd; drop --slurm-arg or use the command-line tools`,
      );
    const v = await this.apiVersion();
    const modern = compareVersions(v, 'v0.0.39') >= 0; // 23.02+: environment as a list, numbers as {set, number}
    const num = (n: number): unknown => (modern ? { set: true, infinite: false, number: n } : n);
    const job: Record<string, unknown> = {
      name: req.name,
      current_working_directory: req.workDir,
      standard_output: req.output,
      standard_error: req.output,
      environment: modern ? Object.entries(req.env).map(([k, val]) => `${k}=${val}`) : req.env,
      time_limit: num(req.timeMinutes),
      requeue: false,
      tasks: 1,
      cpus_per_task: 1,
    };
    if (req.partition) job.partition = req.partition;
    if (req.account) job.account = req.account;
    if (req.gpus) job.tres_per_job = `gres/gpu:${req.gpus}`;
    if (req.memoryMb) job.memory_per_node = num(req.memoryMb);
    const { status, json } = await this.call('POST', '/job/submit', { script: req.script, job });
    const id = json.job_id;
    if (status >= 300 || (typeof id !== 'number' && typeof id !== 'string')) {
      throw new Error(`slurmrestd refused the job (HTTP ${status}): ${SlurmRestBackend.errors(json) || JSON.stringify(json).slice(0, 300)}`);
    }
    return String(id);
  }

  /** GET job/{id} (one job) or GET jobs (several, one call); jobs the controller no longer knows are left out. */
  async states(ids: string[]): Promise<Map<string, ClusterJob>> {
    const out = new Map<string, ClusterJob>();
    if (ids.length > 1) {
      const { status, json } = await this.call('GET', '/jobs');
      if (status < 300) {
        for (const job of (json.jobs as Record<string, unknown>[] | undefined) ?? []) {
          const id = String(job.job_id);
          if (ids.includes(id))
            out.set(id, {
              id,
              state: normalizeState(job.job_state),
              reason: typeof job.state_reason === 'string' ? job.state_reason : undefined,
              name: String(job.name ?? ''),
            });
        }
        return out;
      }
    }
    for (const id of ids) {
      const { status, json } = await this.call('GET', `/job/${id}`);
      const job = (json.jobs as Record<string, unknown>[] | undefined)?.[0];
      if (status >= 300 || !job) continue;
      out.set(id, {
        id,
        state: normalizeState(job.job_state),
        reason: typeof job.state_reason === 'string' ? job.state_reason : undefined,
        name: String(job.name ?? ''),
      });
    }
    return out;
  }

  async cancel(ids: string[]): Promise<void> {
    for (const id of ids) await this.call('DELETE', `/job/${id}`).catch(() => {});
  }

  async live(prefix: string): Promise<ClusterJob[]> {
    const { status, json } = await this.call('GET', '/jobs');
    if (status >= 300) throw new Error(`slurmrestd could not list jobs (HTTP ${status}): ${SlurmRestBackend.errors(json)}`);
    return ((json.jobs as Record<string, unknown>[] | undefined) ?? [])
      .map((j) => ({ id: String(j.job_id), state: normalizeState(j.job_state), name: String(j.name ?? '') }))
      .filter((j) => j.name.startsWith(prefix) && isLive(j.state));
  }
}

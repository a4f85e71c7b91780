/**
 * How the LLM learns outside this process: between iterations `policyUpdateCommand` (a TRL or
 * verl script on a GPU node) trains a LoRA adapter on the iteration's exported batch
 * (trl-batch.ts), and the agent loads it into the server under a new, never-reused name (vLLM's
 * `POST /v1/load_lora_adapter`) and samples the next iteration from it. The adapter, its
 * version and every update are the agent's checkpoint.
 */
import type OpenAI from 'openai';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { jobEnvironment } from '../../../inner/job-env.js';
import { writeJsonLines } from '../../json-lines.js';
import type { IterationContext, RewardGroup, UpdateStats } from '../types.js';
import type { ResolvedLlmOptions } from './options.js';
import { serverHeaders, serverRoot } from './server.js';
import { trlBatchRows } from './trl-batch.js';

/** A record of one policy update between iterations. */
export interface PolicyUpdateRecord {
  iteration: number;
  batch: string;
  rows: number;
  exitCode: number | null;
  /** The adapter loaded after this update (null: the model stayed as it was). */
  adapter: string | null;
  adapterDir: string;
  error: string | null;
  log: string;
}

/** The LLM agent's checkpoint: which adapter it samples from and its policy updates. */
export interface LlmState {
  adapter: string | null;
  version: number;
  updates: PolicyUpdateRecord[];
}

/** The adapter the agent samples from and the policy updates that made it. */
export class PolicyUpdater {
  private adapter: string | null = null;
  private version = 0;
  private updates: PolicyUpdateRecord[] = [];
  /** Whether the restored adapter was checked to be loaded in the server. */
  private adapterChecked = true;

  /** Updates under the agent's settings; `client` lists the server's models. */
  constructor(
    private readonly client: OpenAI,
    private readonly o: Pick<ResolvedLlmOptions, 'model' | 'baseUrl' | 'apiKeyEnv' | 'timeoutSeconds' | 'policyUpdateCommand'>,
    private readonly log: (message: string) => void,
  ) {}

  /** The adapter sampled from (null: the base model). */
  currentAdapter(): string | null {
    return this.adapter;
  }

  /** The model name requests go to: the current adapter, or the base model. */
  servedModel(): string {
    return this.adapter ?? this.o.model;
  }

  /**
   * After a resume: makes sure the restored adapter is loaded in the server (a restarted
   * server has lost it) by loading it again from its directory under its own name; when that
   * fails the agent goes back to the base model and says so.
   */
  async ensureAdapter(): Promise<void> {
    if (this.adapterChecked || this.adapter === null) return;
    this.adapterChecked = true;
    const models = await this.listModels();
    if (models.has(this.adapter)) return;
    const dir = this.updates.find((u) => u.adapter === this.adapter)?.adapterDir;
    const loaded = dir ? await this.loadAdapter(this.adapter, dir) : { ok: false as const, error: 'its directory is not recorded' };
    if (loaded.ok) {
      this.log(`adapter ${this.adapter} was not loaded in the server; loaded it again from ${dir}`);
      return;
    }
    this.log(
      `adapter ${this.adapter} is not loaded in the server and could not be loaded again (${loaded.error}); sampling from the base model ${this.o.model}`,
    );
    this.adapter = null;
  }

  /**
   * Learns from one iteration's scored completions: writes them as a TRL batch (JSON Lines, one
   * row per completion: prompt, completion, reward, advantage, group and job), runs the
   * policy-update command on it and, when the command wrote a LoRA adapter
   * (`adapter_config.json`), loads it into the server under a new name and samples from it from
   * now on. Without a command (in-context learning only) nothing changes. Failures are recorded
   * and the agent keeps its current model; an iteration is updated at most once.
   */
  async update(groups: RewardGroup[], ctx?: IterationContext): Promise<UpdateStats> {
    const command = this.o.policyUpdateCommand;
    if (!command || !ctx || ctx.last || this.updates.some((u) => u.iteration === ctx.iteration)) return {};
    const policyDir = join(resolve(ctx.runDir), 'policy');
    mkdirSync(policyDir, { recursive: true });
    const batch = join(policyDir, `batch-it${ctx.iteration}.jsonl`);
    const rows = trlBatchRows(groups, ctx);
    writeJsonLines(batch, rows);
    await this.policyUpdate(command, ctx, batch, rows.length);
    const last = this.updates[this.updates.length - 1];
    return { rows: rows.length, exitCode: last.exitCode ?? -1, adapterLoaded: last.adapter ? 1 : 0 };
  }

  /** Runs the policy-update command on `batch` and loads the adapter it writes (see `update`). */
  private async policyUpdate(command: string, ctx: IterationContext, batch: string, rows: number): Promise<void> {
    const policyDir = dirname(batch);
    const existing = await this.listModels();
    let version = this.version + 1;
    const safeRun = ctx.runId.replace(/[^A-Za-z0-9_-]/g, '-');
    while (existing.has(`rrl-${safeRun}-v${version}`)) version++;
    const name = `rrl-${safeRun}-v${version}`;
    const adapterDir = join(policyDir, 'adapters', name);
    const logPath = join(policyDir, `update-it${ctx.iteration}.log`);
    const record: PolicyUpdateRecord = { iteration: ctx.iteration, batch, rows, exitCode: null, adapter: null, adapterDir, error: null, log: logPath };
    this.updates.push(record);
    this.log(`policy update after iteration ${ctx.iteration + 1}: ${command}`);
    const fd = openSync(logPath, 'a');
    try {
      record.exitCode = await new Promise<number | null>((done) => {
        const child = spawn(command, {
          shell: true,
          stdio: ['ignore', fd, fd],
          env: {
            ...jobEnvironment(), // never the evaluation secret
            RRL_BATCH: batch,
            RRL_BATCH_FORMAT: 'trl',
            RRL_RUN_DIR: resolve(ctx.runDir),
            RRL_RUN_ID: ctx.runId,
            RRL_ITERATION: String(ctx.iteration),
            RRL_ADAPTER_DIR: adapterDir,
            RRL_ADAPTER_NAME: name,
            RRL_BASE_MODEL: this.o.model,
            RRL_CURRENT_MODEL: this.servedModel(),
            RRL_BASE_URL: this.o.baseUrl,
          },
        });
        child.once('error', (err) => {
          record.error = `the policy-update command could not start: ${err.message}`;
          done(null);
        });
        child.once('exit', (code) => done(code));
      });
    } finally {
      closeSync(fd);
    }
    if (record.exitCode !== 0) {
      record.error ??= `the policy-update command exited with code ${record.exitCode} (log: ${logPath}); keeping ${this.servedModel()}`;
      this.log(record.error);
      return;
    }
    if (!existsSync(join(adapterDir, 'adapter_config.json'))) {
      record.error = `the policy-update command wrote no adapter (no adapter_config.json in ${adapterDir}); keeping ${this.servedModel()}`;
      this.log(record.error);
      return;
    }
    const loaded = await this.loadAdapter(name, adapterDir);
    if (!loaded.ok) {
      record.error = `loading adapter ${name} failed: ${loaded.error}; keeping ${this.servedModel()}`;
      this.log(record.error);
      return;
    }
    this.adapter = name;
    this.version = version;
    record.adapter = name;
    this.log(`loaded adapter ${name}; the next iteration samples from it`);
  }

  /** The model names the server lists (`GET /v1/models`); empty when it cannot be asked. */
  private async listModels(): Promise<Set<string>> {
    try {
      const out = new Set<string>();
      for await (const m of this.client.models.list()) out.add(m.id);
      return out;
    } catch {
      return new Set();
    }
  }

  /** `POST /v1/load_lora_adapter` (vLLM's runtime LoRA loading). */
  private async loadAdapter(name: string, path: string): Promise<{ ok: true } | { ok: false; error: string }> {
    const url = `${serverRoot(this.o.baseUrl)}/v1/load_lora_adapter`;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: serverHeaders(this.o.apiKeyEnv),
        body: JSON.stringify({ lora_name: name, lora_path: path }),
        signal: AbortSignal.timeout(this.o.timeoutSeconds * 1000),
      });
      const text = await res.text();
      return res.ok ? { ok: true } : { ok: false, error: `HTTP ${res.status} from ${url}: ${text.slice(0, 500)}` };
    } catch (err) {
      return { ok: false, error: `${url}: ${(err as Error).message}` };
    }
  }

  /** The adapter sampled from, the version counter and the policy updates so far. */
  async state(): Promise<unknown> {
    return { adapter: this.adapter, version: this.version, updates: this.updates } satisfies LlmState;
  }

  /** Restores `state()`; the adapter is assumed still loaded in the server. */
  async load(state: unknown): Promise<void> {
    const s = (state ?? {}) as Partial<LlmState>;
    this.adapter = s.adapter ?? null;
    this.version = s.version ?? 0;
    this.updates = s.updates ?? [];
    this.adapterChecked = this.adapter === null;
  }
}

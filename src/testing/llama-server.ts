/**
 * A real OpenAI-compatible model server for tests and benchmarks: llama.cpp, through the server of
 * `llama-cpp-python` (installed in .venv by python/setup-venv.sh), serving SmolLM2-135M-Instruct
 * (fetched by python/fetch-model.sh). Bound to 127.0.0.1 on a free port, started and stopped by
 * its caller, killed when this process exits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '../../../..');

/** The repository's virtual environment's Python. */
export const VENV_PYTHON = join(root, '.venv', 'bin', 'python');
/** The small model python/fetch-model.sh fetches. */
export const SMOLLM2_GGUF = join(root, 'models', 'smollm2', 'SmolLM2-135M-Instruct.Q4_1.gguf');

/** Why the server cannot run here (null: it can): no venv, no llama-cpp-python, no model. */
export function llamaServerMissing(model = SMOLLM2_GGUF): string | null {
  if (!existsSync(VENV_PYTHON)) return `no Python virtual environment at ${VENV_PYTHON} (run python/setup-venv.sh)`;
  const r = spawnSync(VENV_PYTHON, ['-c', 'import llama_cpp.server.app'], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0)
    return `llama-cpp-python[server] is not installed in .venv (python/setup-venv.sh installs it): ${(r.stderr ?? '').trim().split('\n').pop()}`;
  if (!existsSync(model)) return `no model at ${model} (run python/fetch-model.sh)`;
  return null;
}

/** A free TCP port on 127.0.0.1 (taken by the OS, released at once). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((done) => srv.listen(0, '127.0.0.1', done));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((done) => srv.close(() => done()));
  return port;
}

/** How the server is started. */
export interface LlamaServerOptions {
  /** The GGUF file (default: SmolLM2-135M-Instruct). */
  model?: string;
  /** The name the server lists and answers to (default: smollm2-135m-instruct). */
  alias?: string;
  /** Context size in tokens (llama-cpp-python's default is 2048). */
  nCtx?: number;
  /** CPU threads (default 1: on a busy machine llama.cpp's OpenMP barriers stall when a second thread is descheduled). */
  threads?: number;
  /** Seconds to wait for the server to answer `GET /v1/models` (default 180). */
  readySeconds?: number;
}

/** llama-cpp-python's OpenAI-compatible server as a child process. */
export class LlamaServer {
  private child: ChildProcess | null = null;
  private readonly onExit = (): void => {
    this.child?.kill('SIGKILL');
  };
  /** The `/v1` base URL once started. */
  baseUrl = '';
  /** Where the server's output goes. */
  readonly logPath: string;
  /** The served model's name. */
  readonly alias: string;
  /** The exact command line it was started with (for the docs and the report). */
  commandLine: string[] = [];

  constructor(private readonly options: LlamaServerOptions = {}) {
    this.alias = options.alias ?? 'smollm2-135m-instruct';
    this.logPath = join(mkdtempSync(join(tmpdir(), 'rrl-llama-')), 'server.log');
  }

  /** The last lines of the server's log (for error messages). */
  logTail(lines = 20): string {
    return existsSync(this.logPath) ? readFileSync(this.logPath, 'utf8').trim().split('\n').slice(-lines).join('\n') : '';
  }

  /** Starts the server and waits until it answers; resolves with the `/v1` base URL. */
  async start(): Promise<string> {
    const port = await freePort();
    const args = [
      '-m',
      'llama_cpp.server',
      '--model',
      this.options.model ?? SMOLLM2_GGUF,
      '--model_alias',
      this.alias,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--n_ctx',
      String(this.options.nCtx ?? 2048),
      '--n_threads',
      String(this.options.threads ?? 1),
    ];
    this.commandLine = [VENV_PYTHON, ...args];
    const fd = openSync(this.logPath, 'a');
    try {
      this.child = spawn(VENV_PYTHON, args, { stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    process.once('exit', this.onExit);
    let exited: string | null = null;
    this.child.once('exit', (code, signal) => (exited = `exited with ${signal ?? `code ${code}`}`));
    this.baseUrl = `http://127.0.0.1:${port}/v1`;
    const deadline = Date.now() + (this.options.readySeconds ?? 180) * 1000;
    while (Date.now() < deadline) {
      if (exited) throw new Error(`the llama-cpp-python server ${exited} before it answered:\n${this.logTail()}`);
      try {
        const res = await fetch(`${this.baseUrl}/models`, { signal: AbortSignal.timeout(2000) });
        if (res.ok) return this.baseUrl;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    await this.close();
    throw new Error(`the llama-cpp-python server did not answer within ${this.options.readySeconds ?? 180} s:\n${this.logTail()}`);
  }

  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = null;
    process.removeListener('exit', this.onExit);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }
}

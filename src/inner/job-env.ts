/**
 * The one rule for what job code may see of the harness's environment. Job worker threads get
 * `jobEnvironment()`: this process's variables without the evaluation secret, the Slurm JWT and
 * anything named like a credential. Job *processes* (command trainers, the Gymnasium bridge,
 * Slurm batch jobs) get `jobProcessEnvironment(home)`: the same, with a home of their own.
 *
 * Why a home of their own: without `RRL_EVAL_SECRET` the harness keeps its secret in
 * `${XDG_CONFIG_HOME:-$HOME/.config}/recursive-rl/eval-secret`, and a process that keeps the
 * user's `HOME` finds that file at its default path. Redirecting `HOME` and the XDG directories
 * takes the default path away; it is not a sandbox (a process of the same Unix user can still
 * open any file that user can read, given its absolute path). docs/boundaries.md says how to run
 * trainers as another user, which is what keeps the secret out of reach.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Secret names: RRL_EVAL_SECRET (and its file's path), SLURM_JWT, any name holding SECRET,
 * PASSWORD, API_KEY or APIKEY, and TOKEN as a word of the name (`HF_TOKEN`, `GH_TOKEN_RO`;
 * not `TOKENIZER_PATH`). Case is ignored.
 */
const SECRET_NAME = /^RRL_EVAL_SECRET(_FILE)?$|^SLURM_JWT$|SECRET|PASSWORD|API_?KEY|(^|_)TOKENS?(_|$)/i;

/** Whether job code is kept from seeing the environment variable `name`. */
export function isSecretEnvName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** A copy of `env` (default: this process's) without secrets, for job code. */
export function jobEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !isSecretEnvName(name)) out[name] = value;
  return out;
}

/** The per-user directories a job process gets under its own home (the XDG base directories). */
export function jobHomeDirs(home: string): Record<'HOME' | 'XDG_CONFIG_HOME' | 'XDG_CACHE_HOME' | 'XDG_DATA_HOME' | 'XDG_STATE_HOME', string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
  };
}

/**
 * The environment of a job process: `jobEnvironment(env)` with `HOME` and the XDG base
 * directories under `home` (created, mode 0700), never the user's. Python's user site
 * (`pip install --user`) stays where it was: `PYTHONUSERBASE` is set to the user's `~/.local`
 * when that exists and nothing else names one, so a Gymnasium installed there still imports.
 * With `create: false` the directories are only named (a Slurm job makes them on its node).
 */
export function jobProcessEnvironment(home: string, o: { env?: NodeJS.ProcessEnv; create?: boolean } = {}): Record<string, string> {
  const env = o.env ?? process.env;
  const out = jobEnvironment(env);
  const userBase = join(env.HOME || homedir(), '.local');
  if (!out.PYTHONUSERBASE && existsSync(userBase)) out.PYTHONUSERBASE = userBase;
  const dirs = jobHomeDirs(home);
  for (const [name, dir] of Object.entries(dirs)) {
    if (o.create !== false) mkdirSync(dir, { recursive: true, mode: 0o700 });
    out[name] = dir;
  }
  return out;
}

/** A temporary home for one job process: its environment, and `remove()` for when the process has ended. */
export interface JobHome {
  /** The home directory (under the system's temporary directory). */
  dir: string;
  /** The process's environment (`jobProcessEnvironment(dir)`). */
  env: Record<string, string>;
  /** Deletes the home and everything the process left in it. */
  remove(): void;
}

/** Creates a fresh temporary home (mode 0700) and the environment of a job process living in it. */
export function temporaryJobHome(prefix = 'rrl-job-home-'): JobHome {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, env: jobProcessEnvironment(dir), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

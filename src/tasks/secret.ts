/**
 * The harness's evaluation secret, from which every held-out seed and split is derived.
 *
 * - `RRL_EVAL_SECRET` (any non-empty string) overrides everything. An integer keeps the
 *   historical derivation (so `RRL_EVAL_SECRET=1779033703` reproduces the held-out sets of the
 *   old built-in default, which the test suite pins); any other string is hashed.
 * - Otherwise the secret is random per installation: 32 bytes from `crypto.randomBytes`, kept in
 *   `RRL_EVAL_SECRET_FILE` or `${XDG_CONFIG_HOME:-~/.config}/recursive-rl/eval-secret` (mode
 *   0600, outside the repository and every job directory). The first process to need it
 *   creates the file with an exclusive create of a fully written temporary file (a hard link),
 *   so two processes starting together agree on one secret. A file that group or others can
 *   read (mode & 0o077) is refused, naming the `chmod 600` that fixes it.
 *
 * Job code never receives it: jobs get only their spec, and job processes (command trainers,
 * the Gymnasium bridge, Slurm jobs) run without `RRL_EVAL_SECRET` / `RRL_EVAL_SECRET_FILE` and
 * with a HOME and XDG directories of their own, so the default path above is not theirs
 * (inner/job-env.ts; docs/boundaries.md says what that does and does not promise).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fstatSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { mixSeed } from '../util/rng.js';

/** Where the per-installation secret lives (RRL_EVAL_SECRET_FILE, else the user's config dir). */
export function evalSecretFile(): string {
  const explicit = process.env.RRL_EVAL_SECRET_FILE;
  if (explicit) return explicit;
  const config = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(config, 'recursive-rl', 'eval-secret');
}

const fileSecrets = new Map<string, string>();

/**
 * Refuses a secret file others could read (any group or other permission bit) or replace (a
 * directory that group or others may write to, unless sticky like /tmp): one line naming the
 * file, its mode and the `chmod` that fixes it.
 */
export function checkSecretFileMode(path: string, fileMode: number, dirMode: number): void {
  const octal = (m: number): string => `0${(m & 0o777).toString(8).padStart(3, '0')}`;
  if (fileMode & 0o077) throw new Error(`evaluation secret file ${path} has mode ${octal(fileMode)}: group or others may read it; run \`chmod 600 ${path}\``);
  if (dirMode & 0o022 && !(dirMode & 0o1000)) {
    throw new Error(
      `evaluation secret file ${path}: its directory ${dirname(path)} has mode ${octal(dirMode)}: ` +
        `group or others may replace the secret; run \`chmod 700 ${dirname(path)}\``,
    );
  }
}

/** The secret in the file at `path` (null when it is missing or empty), its mode checked first. */
function readSecretFile(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`evaluation secret file ${path}: ${(err as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`evaluation secret file ${path} is not a regular file`);
    checkSecretFileMode(path, st.mode, statSync(dirname(path)).mode);
    const s = readFileSync(fd, 'utf8').trim();
    return s === '' ? null : s;
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the secret file, creating it (atomically, 0600) with 32 random bytes when missing; a
 * file that group or others can read is refused (`checkSecretFileMode`).
 */
function secretFromFile(path: string): string {
  const known = fileSecrets.get(path);
  if (known) return known;
  const read = (): string | null => readSecretFile(path);
  let secret = read();
  if (secret === null) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(tmp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600);
    try {
      linkSync(tmp, path); // fails with EEXIST if another process won the race: then read its secret
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`evaluation secret file ${path}: ${(err as Error).message}`);
    } finally {
      rmSync(tmp, { force: true });
    }
    secret = read();
    if (secret === null) throw new Error(`evaluation secret file ${path} is empty`);
  }
  fileSecrets.set(path, secret);
  return secret;
}

let threadSecret: string | null = null;

/**
 * Fixes the secret this thread evaluates with (the scorer worker receives it from the harness
 * with each task, so that it scores under exactly the secret its run recorded).
 */
export function useEvalSecret(secret: string): void {
  if (secret === '') throw new Error('the evaluation secret must not be empty');
  threadSecret = secret;
}

/**
 * Runs `fn` with this thread's evaluation secret set to `secret` and restores the previous one
 * afterwards (an experiment that repeats itself under several secrets; nothing else may run in
 * this thread meanwhile).
 */
export async function withEvalSecret<T>(secret: string, fn: () => Promise<T>): Promise<T> {
  if (secret === '') throw new Error('the evaluation secret must not be empty');
  const previous = threadSecret;
  threadSecret = secret;
  try {
    return await fn();
  } finally {
    threadSecret = previous;
  }
}

/**
 * The `k`-th evaluation secret of an experiment under several: k = 0 is `base` (the
 * installation's), k ≥ 1 an HMAC of `base`, so each installation gets its own, repeatable set.
 */
export function derivedEvalSecret(k: number, base = evalSecret()): string {
  if (!Number.isInteger(k) || k < 0) throw new Error(`the secret's index must be a non-negative integer, got ${k}`);
  return k === 0 ? base : createHmac('sha256', base).update(`rrl-experiment-secret/${k}`).digest('hex');
}

/** The evaluation secret as a string (the thread's, else RRL_EVAL_SECRET, else the installation's secret file). */
export function evalSecret(): string {
  if (threadSecret !== null) return threadSecret;
  const raw = process.env.RRL_EVAL_SECRET;
  if (raw !== undefined && raw !== '') return raw;
  return secretFromFile(evalSecretFile());
}

/**
 * The evaluation identity: the first 16 hex digits of sha256("rrl-eval/" + secret). It names
 * which secret scored a run or a cached result without revealing it.
 */
export function evalIdentity(secret = evalSecret()): string {
  return createHash('sha256').update(`rrl-eval/${secret}`).digest('hex').slice(0, 16);
}

function taskHash(taskId: string): number {
  let h = 0;
  for (const ch of taskId) h = mixSeed(h, ch.codePointAt(0) ?? 0);
  return h;
}

/** `count` held-out episode seeds for a task, derived from the secret and the task id. */
export function heldOutSeeds(taskId: string, count: number, secret = evalSecret()): number[] {
  // Held-out seeds live above 2^31 so no spec seed (bounded to 2^31 - 1) can name them.
  if (/^-?\d+$/.test(secret.trim())) {
    const s = Number(secret) >>> 0;
    const h = taskHash(taskId);
    return Array.from({ length: count }, (_, i) => (mixSeed(s, h, i) | 0x80000000) >>> 0);
  }
  return Array.from({ length: count }, (_, i) => (createHmac('sha256', secret).update(`held-out/${taskId}/${i}`).digest().readUInt32BE(0) | 0x80000000) >>> 0);
}

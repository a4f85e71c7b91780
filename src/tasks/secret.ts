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
 *   so two processes starting together agree on one secret.
 *
 * Job code never receives it: jobs get only their spec, and the command trainers' and Slurm
 * jobs' environments are stripped of `RRL_EVAL_SECRET`.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** Reads the secret file, creating it (atomically, 0600) with 32 random bytes when missing. */
function secretFromFile(path: string): string {
  const known = fileSecrets.get(path);
  if (known) return known;
  const read = (): string | null => {
    try {
      const s = readFileSync(path, 'utf8').trim();
      return s === '' ? null : s;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new Error(`evaluation secret file ${path}: ${(err as Error).message}`);
    }
  };
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

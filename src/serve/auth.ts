/**
 * Who may talk to a harness HTTP server (`rrl serve`, `rrl dashboard`): loopback without a token,
 * any other address only with a bearer token read from an environment variable (`--token-env`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** True for the loopback addresses, where a token is optional. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The token named by `--token-env VAR` (null without the flag). Throws when the variable is empty,
 * or when `host` is beyond loopback and there is no token.
 */
export function tokenFromEnv(varName: string | undefined, host: string, env: NodeJS.ProcessEnv = process.env): string | null {
  let token: string | null = null;
  if (varName) {
    token = env[varName] ?? '';
    if (!token) throw new Error(`--token-env ${varName}: the variable is empty or unset`);
  }
  if (!isLoopback(host) && !token) throw new Error(`--host ${host} is beyond loopback: a bearer token is required (--token-env VAR, with the token in $VAR)`);
  return token;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** A constant-time comparison of candidate tokens with `token` (always true when `token` is null). */
export function tokenChecker(token: string | null): (candidate: string | null | undefined) => boolean {
  const expected = token ? digest(token) : null;
  return (candidate) => expected === null || (typeof candidate === 'string' && timingSafeEqual(digest(candidate), expected));
}

/** The token of an `Authorization: Bearer TOKEN` header, or null. */
export function bearerOf(req: IncomingMessage): string | null {
  return /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
}

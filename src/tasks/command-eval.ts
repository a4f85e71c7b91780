/**
 * A hidden evaluation that is an outside program (harness side only): the held-out data is
 * written to a private temporary file for the one call, the program runs as
 * `argv... JOB_DIR HELD_OUT_JSON` and prints `{"raw": number}`; the file is removed after.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveCommand } from '../inner/command.js';

/** Runs an evaluation command on an artifact directory with the held-out data; returns the raw score. */
export function runEvaluationCommand(argv: string[], jobDir: string, heldOut: unknown, timeoutMs = 120_000): number {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-heldout-'));
  try {
    const file = join(tmp, 'held-out.json');
    writeFileSync(file, JSON.stringify(heldOut), { mode: 0o600 });
    const [program, ...args] = resolveCommand(argv);
    const r = spawnSync(program, [...args, jobDir, file], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 });
    if (r.error) throw new Error(`evaluation command ${program}: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`evaluation command exited with ${r.signal ?? `code ${r.status}`}: ${(r.stderr || r.stdout).trim().split('\n').slice(-2).join(' | ')}`);
    const last = r.stdout.trim().split('\n').at(-1) ?? '';
    let raw: unknown;
    try {
      raw = (JSON.parse(last) as { raw?: unknown }).raw;
    } catch {
      raw = undefined;
    }
    if (typeof raw !== 'number' || !Number.isFinite(raw)) throw new Error(`evaluation command: expected {"raw": number} as the last line of its output, got "${last.slice(0, 200)}"`);
    return raw;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

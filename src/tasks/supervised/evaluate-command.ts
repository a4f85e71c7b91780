/**
 * A hidden evaluation that is an outside program (harness side only): the held-out data is
 * written to a private temporary file for the one call, the program runs as
 * `argv... JOB_DIR HELD_OUT_JSON` and prints `{"raw": number}` as its last line; the file is
 * removed after. For a standard error it may add `"rows": number[]` (one value per test row
 * whose mean is `raw`, e.g. 1/0 for correct/wrong: bootstrapped like the built-in tasks) or
 * `"stderr": number`; with neither the score's standard error is null (unknown).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveCommand } from '../../inner/command.js';
import type { Evaluation } from '../hidden-types.js';
import { meanStderr } from '../bootstrap.js';

/** Runs an evaluation command on an artifact directory with the held-out data; returns the raw score and its standard error. */
export function runEvaluationCommand(argv: string[], jobDir: string, heldOut: unknown, timeoutMs = 120_000): Evaluation {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-heldout-'));
  try {
    const file = join(tmp, 'held-out.json');
    writeFileSync(file, JSON.stringify(heldOut), { mode: 0o600 });
    const [program, ...args] = resolveCommand(argv);
    const r = spawnSync(program, [...args, jobDir, file], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 });
    if (r.error) throw new Error(`evaluation command ${program}: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`evaluation command exited with ${r.signal ?? `code ${r.status}`}: ${lastWords(r.stderr || r.stdout)}`);
    const last = r.stdout.trim().split('\n').at(-1) ?? '';
    let out: { raw?: unknown; rows?: unknown; stderr?: unknown } = {};
    try {
      const parsed: unknown = JSON.parse(last);
      if (parsed && typeof parsed === 'object') out = parsed as typeof out;
    } catch {
      // not JSON: reported below
    }
    const { raw, rows, stderr } = out;
    if (typeof raw !== 'number' || !Number.isFinite(raw)) {
      throw new Error(`evaluation command: expected {"raw": number} as the last line of its output, got "${last.slice(0, 200)}"`);
    }
    const numbers = Array.isArray(rows) && rows.every((v) => typeof v === 'number' && Number.isFinite(v));
    if (numbers && rows.length > 1) return { raw, stderr: meanStderr(rows as number[]) };
    if (typeof stderr === 'number' && Number.isFinite(stderr) && stderr >= 0) return { raw, stderr };
    return { raw, stderr: null };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The last two telling lines of a program's output (no stack frames, no Node.js version banner). */
function lastWords(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('at ') && !/^Node\.js v\d/.test(l) && l !== '^');
  const error = lines.findLast((l) => /^\w*Error\b/.test(l));
  return error ?? lines.slice(-2).join(' | ');
}

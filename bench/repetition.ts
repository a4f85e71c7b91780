/**
 * What the benches that read a finished transfer repetition (`zero-shot`, `held-out-confirm`)
 * share: their `--dir`, `--preset`, `--seed` and `--workers` options, and the experiment's cache.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type TransferOptions, resolveFamilies, transferPreset } from '../src/outer/experiment.js';

/** A repetition bench's options, parsed from `process.argv` (errors name the bench). */
export interface RepetitionArgs {
  /** The repetition's directory, absolute. */
  dir: string;
  preset: 'full' | 'quick';
  /** The preset's options with its family draws resolved (the held-out tasks come from them). */
  options: TransferOptions;
  seed: number;
  workers: number;
  /** Any other `--NAME=value` option. */
  opt: (name: string) => string | undefined;
}

/** Parses a repetition bench's options; `dirHint` ends the error when `--dir` is missing. */
export function repetitionArgs(bench: string, dirHint: string): RepetitionArgs {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const dirArg = opt('dir');
  if (!dirArg) throw new Error(`${bench}: --dir=<${dirHint}> is required`);
  const preset = opt('preset') ?? 'full';
  if (preset !== 'full' && preset !== 'quick') throw new Error(`${bench}: --preset must be full or quick, got "${preset}"`);
  const options = resolveFamilies(transferPreset(preset));
  return { dir: resolve(dirArg), preset, options, seed: Number(opt('seed') ?? options.seed), workers: Number(opt('workers') ?? 2), opt };
}

/** The experiment's cache (the repetition's directory, or two levels up from a `secret-K/seed-S` one), else a new one in `tmp`. */
export function repetitionCache(dir: string, tmp: string): string {
  return [join(dir, 'cache.db'), join(dir, '..', 'cache.db'), join(dir, '..', '..', 'cache.db')].find((p) => existsSync(p)) ?? join(tmp, 'cache.db');
}

/**
 * The parsers of flag values (each throws commander's InvalidArgumentError, which commander prints
 * as `error: option '…' argument '…' is invalid. MESSAGE`; `flag`, the flag's name for the message,
 * comes from the flag table), and `oneOf`, the check of a flag that names one of a list, made when
 * the command runs.
 */
import { InvalidArgumentError } from 'commander';
import { FAMILIES } from '../../tasks/families/index.js';
import type { CorpusSelection } from '../../tasks/corpus/register.js';
import type { CorpusSplit } from '../../tasks/corpus/splits.js';

/** A parser of integers in [min, max]. */
export function int(min: number, max: number) {
  return (v: string, _previous: unknown, flag: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${flag} must be an integer in [${min}, ${max}], got "${v}"`);
    return n;
  };
}

/** A parser of numbers in [min, max]; a blank value is refused, unless `blankIsZero` (it then reads as 0). */
export function real(min: number, max: number, { blankIsZero = false } = {}) {
  return (v: string, _previous: unknown, flag: string): number => {
    const n = Number(v);
    if ((!blankIsZero && v.trim() === '') || !Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(`${flag} must be a number in [${min}, ${max}], got "${v}"`);
    }
    return n;
  };
}

/** Parses `--min-share`: a fraction written `1/9` or a number, in (0, 1]. */
export function share(v: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(v);
  const n = m ? Number(m[1]) / Number(m[2]) : v.trim() === '' ? NaN : Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new InvalidArgumentError(`--min-share must be a fraction in (0, 1] such as 1/9 or 0.25, got "${v}"`);
  return n;
}

/** Parses a JSON object (not an array, not null). */
export function jsonObject(v: string, _previous: unknown, flag: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch (err) {
    throw new InvalidArgumentError(`${flag} must be a JSON object, got "${v}" (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError(`${flag} must be a JSON object, got "${v}"`);
  return parsed as Record<string, unknown>;
}

/** Collects a repeatable flag's values in the order given. */
export function repeatable(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

/** One `--family` draw: COUNT tasks of family NAME. */
export interface FamilyDraw {
  family: string;
  count: number;
}

/** `--family NAME[:COUNT]` (repeatable; COUNT defaults to 10): family draws, validated against the known families. */
export function familyDraws(v: string, prev: FamilyDraw[] = []): FamilyDraw[] {
  const m = /^([a-z][a-z0-9-]*)(?::(\d+))?$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError(`--family takes NAME or NAME:COUNT, e.g. cartpole:20; got "${v}"`);
  if (!FAMILIES[m[1]]) throw new InvalidArgumentError(`unknown task family "${m[1]}"; known families: ${Object.keys(FAMILIES).join(', ')}`);
  const count = m[2] === undefined ? 10 : Number(m[2]);
  if (count < 1 || count > 10_000) throw new InvalidArgumentError(`--family ${m[1]}: COUNT must be 1 to 10000, got ${count}`);
  return [...prev, { family: m[1], count }];
}

/**
 * `--corpus SPLIT[:N][@PKG,PKG…]`: up to N tasks (default 4) of each package of a corpus split
 * (train, validation or held-out), of the named packages only when given; repeatable.
 */
export function corpusSelections(v: string, prev: CorpusSelection[] = []): CorpusSelection[] {
  const m = /^(train|validation|held-out)(?::(\d+))?(?:@([A-Za-z0-9._,-]+))?$/.exec(v.trim());
  if (!m)
    throw new InvalidArgumentError(`--corpus takes SPLIT[:N][@PACKAGE,...] with SPLIT train, validation or held-out, e.g. held-out:4@plm,psych; got "${v}"`);
  const perPackage = m[2] === undefined ? 4 : Number(m[2]);
  if (perPackage < 1 || perPackage > 1000) throw new InvalidArgumentError(`--corpus ${m[1]}: N must be 1 to 1000, got ${perPackage}`);
  const packages = m[3]?.split(',').filter(Boolean);
  return [...prev, { split: m[1] as CorpusSplit, perPackage, ...(packages?.length ? { packages } : {}) }];
}

/** `value` as one of `choices`, else an error `FLAG must be one of A, B, C, got "VALUE"` (checked when the command runs). */
export function oneOf<T extends string>(flag: string, choices: readonly T[], value: string): T {
  if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`${flag} must be one of ${choices.join(', ')}, got "${value}"`);
  return value as T;
}

/**
 * Flag tables: each command-line flag declared once (its commander syntax, help, parser and
 * default), from which come both the commander options (`addFlags`) and the type of the values
 * the command's action receives (`FlagValues`), the way TRL derives its flags from its config
 * dataclasses.
 */
import { type Command, Option } from 'commander';

/** One flag: the key it has in its table is the name commander gives its value (`--llm-n` → `llmN`). */
export interface Flag<T = unknown> {
  /** Commander's syntax: `--name <value>` (a value), `--name [value]` (an optional one), `--name` or `--no-name` (a switch). */
  readonly flag: string;
  /** The help text (`rrl CMD --help`). */
  readonly help: string;
  /**
   * Reads the text given, throwing commander's InvalidArgumentError; `previous` is the value so far
   * (for repeatable flags), `flag` the flag's long name for the message, e.g. `--workers`.
   */
  parse?(value: string, previous: T, flag: string): T;
  /** The value when the flag is not given (shown in the help). */
  readonly default?: T;
  /** Whether the flag must be given. */
  readonly required?: boolean;
  /** The help of a `--no-name` twin registered right after it (its value is then false). */
  readonly negate?: string;
}

/** A group of flags, keyed by the name of each one's value. */
export type FlagTable = Readonly<Record<string, Flag>>;

/** The value a given flag has: its parser's result, else what its syntax gives. */
type GivenValue<F extends Flag> = F extends { parse(value: string, previous: never, flag: string): infer R }
  ? R
  : F['flag'] extends `--no-${string}`
    ? boolean
    : F['flag'] extends `${string}<${string}>`
      ? F extends { negate: string }
        ? string | false
        : string
      : F['flag'] extends `${string}[${string}]`
        ? string | true
        : true;

/** Whether a flag always has a value (a default, a required or a `--no-` one). */
type AlwaysSet<F extends Flag> = F extends { default: unknown } | { required: true } ? true : F['flag'] extends `--no-${string}` ? true : false;

/** The values of a table's flags as a command's action receives them (undefined: not given, no default). */
export type FlagValues<T extends FlagTable> = {
  -readonly [K in keyof T]: AlwaysSet<T[K]> extends true ? GivenValue<T[K]> : GivenValue<T[K]> | undefined;
};

/** The commander option of `flag`, checked to store its value under `name` (its key in the table). */
function option(name: string, flag: string, help: string): Option {
  const o = new Option(flag, help);
  if (o.attributeName() !== name) throw new Error(`flag table: ${flag} is stored as "${o.attributeName()}", not "${name}"`);
  return o;
}

/** Registers a table's flags on `cmd`, in the table's order; returns `cmd` for chaining. */
export function addFlags(cmd: Command, table: FlagTable): Command {
  for (const [name, f] of Object.entries(table)) {
    const o = option(name, f.flag, f.help);
    if (f.required) o.makeOptionMandatory();
    if (f.default !== undefined) o.default(f.default);
    if (f.parse) o.argParser((value: string, previous: unknown) => f.parse!(value, previous, o.long!));
    cmd.addOption(o);
    if (f.negate !== undefined) cmd.addOption(option(name, `--no-${o.long!.slice(2)}`, f.negate));
  }
  return cmd;
}

/** A flag table with its literal types kept, so that `FlagValues` can read each flag's syntax. */
export function flagTable<const T extends FlagTable>(table: T): T {
  return table;
}

/** Flags that several commands declare alike: the task directory, family draws, workers, `--json`, listening and reward. */
import { DOOR_DEFAULTS } from '../../serve/front-door.js';
import { corpusSelections, familyDraws, int } from './parse.js';
import { flagTable } from './table.js';

/** The help of `--task-dir` (commands may add to it). */
export const TASK_DIR_HELP =
  'a directory of your own task files (*.json), next to the built-in tasks (default: ./tasks where it exists; see docs/tasks-own.md)';

/** `--task-dir DIR`: the user's own task files (see `useTaskDir`). */
export function taskDirFlag(help = TASK_DIR_HELP) {
  return { flag: '--task-dir <dir>', help } as const;
}

/** The help of `--family` (commands add what the drawn tasks are for). */
export const FAMILY_HELP = 'tasks drawn from a task family, NAME[:COUNT] (repeatable; COUNT 10 by default; `rrl tasks --families` lists them)';

/** `--family NAME[:COUNT]` (repeatable) and `--family-seed S` (default 1), with each command's help. */
export function familyFlags(familyHelp: string, seedHelp: string) {
  return flagTable({
    family: { flag: '--family <name[:count]>', help: familyHelp, parse: familyDraws },
    familySeed: { flag: '--family-seed <s>', help: seedHelp, parse: int(0, 2 ** 31 - 1), default: 1 },
  });
}

/** `--corpus SPLIT[:N][@PACKAGES]`: tasks of the real-table corpus (python/fetch-corpus.sh builds it). */
export function corpusFlag(help: string) {
  return {
    flag: '--corpus <split[:n][@packages]>',
    help: `${help}: up to N (default 4) tasks of each package of a corpus split (train, validation or held-out), of the named packages (comma-separated) only when given, e.g. held-out:4@plm,psych; repeatable; needs python/fetch-corpus.sh`,
    parse: corpusSelections,
  } as const;
}

/** `--workers N`: worker threads for the jobs. */
export const WORKERS_FLAG = { flag: '--workers <n>', help: 'worker threads (default: one per core)', parse: int(1, 256) } as const;

/** `--json`: the result as one JSON object, the last line of stdout. */
export const JSON_RESULT_FLAG = { flag: '--json', help: 'one JSON object on stdout as the last line' } as const;

/** `--host H` and `--port P` of a server (`port`: the default port). */
export function listenFlags(port: number) {
  return flagTable({
    host: { flag: '--host <host>', help: 'address to listen on (beyond loopback a bearer token is required)', default: '127.0.0.1' },
    port: { flag: '--port <port>', help: 'port (0: any free one)', parse: int(0, 65_535), default: port },
  });
}

/** `--max-connections N` of a server. */
export const MAX_CONNECTIONS_FLAG = {
  flag: '--max-connections <n>',
  help: 'most open connections; one past it gets 503 and is closed',
  parse: int(1, 100_000),
  default: DOOR_DEFAULTS.maxConnections,
} as const;

/** `--reward RULE`: the outer reward rule (checked when the command runs). */
export const REWARD_FLAG = { flag: '--reward <rule>', help: 'outer reward rule: improvement | best | cost', default: 'improvement' } as const;

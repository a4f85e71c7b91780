/**
 * A task directory: every `*.json` file directly in it is a task file; data files may sit
 * beside them or in subfolders (never outside). `registerTaskDir` loads them all and adds them
 * to the registry next to the built-in tasks; the scorer threads, which score in threads of
 * their own, register the same directories (`registeredTaskDirs`). Each task file's fingerprint
 * parts (its bytes and its data files', tasks/fingerprint.ts) are taken before and after it
 * loads and kept: a file that changed while it loaded is refused, and the fingerprint names
 * exactly what this thread loaded.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { registerTasks } from '../extra.js';
import { type FingerprintPart, keepTaskFileParts, forgetTaskFileParts, taskFileParts } from '../fingerprint.js';
import { type LoadedTask, TaskFileError, loadTaskFile } from './load.js';
import './control.js'; // wires control (Gymnasium) task files to the bridge

/** The problems of a task directory: one line per problem, each naming its file. */
export class TaskDirError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** The task directory used when none is given: `./tasks` where it exists, else none. */
export function defaultTaskDir(cwd = process.cwd()): string | null {
  const dir = join(cwd, 'tasks');
  return existsSync(dir) && statSync(dir).isDirectory() ? dir : null;
}

/** The task files of a directory (`*.json` directly in it), sorted. */
export function taskFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new TaskDirError([`${dir}: cannot read the task directory (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`]);
  }
  return names
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => join(dir, n));
}

/** Loads every task file of a directory; throws `TaskDirError` with every file's problems (and clashing ids). */
export async function loadTaskDir(dir: string): Promise<LoadedTask[]> {
  const root = resolve(dir);
  const problems: string[] = [];
  const loaded: LoadedTask[] = [];
  for (const file of taskFiles(root)) {
    try {
      loaded.push(await loadTaskFile(file, root));
    } catch (err) {
      if (err instanceof TaskFileError) problems.push(...err.message.split('\n'));
      else problems.push(`${relative(process.cwd(), file)}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  const byId = new Map<string, string>();
  for (const t of loaded) {
    const other = byId.get(t.task.id);
    if (other) problems.push(`${relative(process.cwd(), t.file)}: id "${t.task.id}" is also the id of ${relative(process.cwd(), other)}`);
    byId.set(t.task.id, t.file);
  }
  if (problems.length) throw new TaskDirError(problems);
  return loaded;
}

const REGISTERED = new Map<string, Promise<LoadedTask[]>>();

/**
 * Loads a task directory and registers its tasks (once per directory in this thread); throws
 * `TaskDirError` when a file has problems or an id clashes with a known task.
 */
export function registerTaskDir(dir: string): Promise<LoadedTask[]> {
  const root = resolve(dir);
  let p = REGISTERED.get(root);
  if (!p) {
    const before = new Map<string, FingerprintPart[]>();
    try {
      for (const f of taskFiles(root)) before.set(f, taskFileParts(f));
    } catch (err) {
      return Promise.reject(err);
    }
    p = loadTaskDir(root).then((tasks) => {
      const changed = tasks.filter((t) => JSON.stringify(taskFileParts(t.file)) !== JSON.stringify(before.get(t.file)));
      if (changed.length)
        throw new TaskDirError(
          changed.map((t) => `${relative(process.cwd(), t.file)}: the task file or a data file it names changed while it loaded; load it again`),
        );
      try {
        registerTasks(tasks.map((t) => t.extra));
      } catch (err) {
        throw new TaskDirError([(err as Error).message]);
      }
      for (const t of tasks) keepTaskFileParts(t.file, before.get(t.file)!);
      return tasks;
    });
    REGISTERED.set(root, p);
    p.catch(() => REGISTERED.delete(root));
  }
  return p;
}

/** The task directories registered in this thread (absolute paths), for the scorer threads. */
export function registeredTaskDirs(): string[] {
  return [...REGISTERED.keys()];
}

/** Forgets the registered directories and their kept fingerprints (tests: the next `registerTaskDir` reads the files again, as a new process would). */
export function forgetTaskDirs(): void {
  REGISTERED.clear();
  forgetTaskFileParts();
}

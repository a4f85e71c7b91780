/**
 * Tasks added at run time next to the built-in ones (a user's task files, see `tasks/file/`;
 * generated families, `tasks/families/`; the real-table corpus, `tasks/corpus/`). `registerTasks`
 * is the one way in: the public registry (`briefs.ts`) and the hidden one (`hidden.ts`) both read
 * the list kept here, so a task registered once is known to both. A thread or process that scores
 * (the scorer worker) registers the same files, family draws and corpus tasks itself.
 */
import type { SupervisedTaskDef } from './supervised/define.js';
import type { GymnasiumTaskDef, GymnasiumTaskOptions } from './gymnasium/define.js';
import type { ControlTaskDef } from './control/define.js';
import type { SupervisedTaskFile } from './file/schema.js';
import { CONTROL_TASKS } from './control/tasks.js';
import { SUPERVISED_TASKS } from './supervised/tasks.js';
import { EXAMPLE_TASKS } from './supervised/examples.js';
import { GYMNASIUM_TASKS } from './gymnasium/tasks.js';

/** A task a family drew: the family's name and the parameters it drew for the task (`families/<name>/define.ts`). */
export interface MadeByFamily {
  family: string;
  params: unknown;
}

/** What a corpus task was made from: its table (`package::item`), its target and the table file's sha256 (`tasks/corpus/`). */
export interface MadeFromCorpus {
  corpus: { package: string; item: string; target: string; sha256: string };
}

/**
 * A task added at run time: supervised from the user's data, a family's draw or a corpus table, control on a
 * Gymnasium environment, or control on a built-in simulator (a family's draw). `def` is the public
 * definition; `madeFrom` is what the task was made from (a family's draw, the task file, the
 * Gymnasium options), from which the evaluation side (`tasks/hidden.ts`) builds what its
 * evaluation knows, by task id.
 */
export type ExtraTask =
  | { kind: 'supervised'; def: SupervisedTaskDef; origin: string; madeFrom: MadeByFamily | { taskFile: SupervisedTaskFile } | MadeFromCorpus }
  | { kind: 'control'; def: GymnasiumTaskDef; origin: string; madeFrom: { options: GymnasiumTaskOptions } }
  | { kind: 'control-sim'; def: ControlTaskDef; origin: string; madeFrom: MadeByFamily };

const EXTRA = new Map<string, ExtraTask>();

/** The ids of the built-in tasks. */
export function builtInTaskIds(): string[] {
  return [...CONTROL_TASKS, ...SUPERVISED_TASKS, ...EXAMPLE_TASKS, ...GYMNASIUM_TASKS].map((d) => d.id);
}

/**
 * Adds tasks to the registry. An id that clashes with a built-in task, or with a task registered
 * from another file, is an error naming both; registering the same file's task again replaces it.
 */
export function registerTasks(tasks: ExtraTask[]): void {
  const builtIn = new Set(builtInTaskIds());
  for (const t of tasks) {
    if (builtIn.has(t.def.id)) throw new Error(`${t.origin}: id "${t.def.id}" clashes with a built-in task; choose another id`);
    const known = EXTRA.get(t.def.id);
    if (known && known.origin !== t.origin) throw new Error(`${t.origin}: id "${t.def.id}" is already used by ${known.origin}`);
  }
  for (const t of tasks) EXTRA.set(t.def.id, t);
}

/** The tasks registered at run time, in registration order. */
export function extraTasks(): ExtraTask[] {
  return [...EXTRA.values()];
}

/** Forgets every task registered at run time (tests). */
export function clearExtraTasks(): void {
  EXTRA.clear();
}

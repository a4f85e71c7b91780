/**
 * Tasks added at run time next to the built-in ones (a user's task files, see `tasks/file/`).
 * `registerTasks` is the one way in: the public registry (`briefs.ts`) and the hidden one
 * (`hidden.ts`) both read the list kept here, so a task registered once is known to both.
 * A thread or process that scores (the scorer worker) registers the same files itself.
 */
import type { SupervisedTaskDef } from './supervised/define.js';
import type { GymnasiumTaskDef } from './gymnasium/define.js';
import type { ControlTaskDef } from './control/define.js';
import type { PhysParams } from '../inner/envs/types.js';
import { CONTROL_TASKS } from './control/tasks.js';
import { SUPERVISED_TASKS } from './supervised/tasks.js';
import { EXAMPLE_TASKS } from './supervised/examples.js';
import { GYMNASIUM_TASKS } from './gymnasium/tasks.js';

/**
 * A task added at run time: supervised from the user's data, control on a Gymnasium environment,
 * or control on a built-in simulator (generated task families, `tasks/families/`). A built-in
 * simulator task may draw its deployment physics from the evaluation secret (`deployment`,
 * harness side; without it the evaluation runs on `def.hidden.params`).
 */
export type ExtraTask =
  | { kind: 'supervised'; def: SupervisedTaskDef; origin: string }
  | { kind: 'control'; def: GymnasiumTaskDef; origin: string }
  | { kind: 'control-sim'; def: ControlTaskDef; origin: string; deployment?: (secret: string) => PhysParams };

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

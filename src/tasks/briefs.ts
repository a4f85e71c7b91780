/**
 * The public side of the task registry: briefs and baseline specs only. Anything that
 * runs jobs (inner/, run/, agents) may import this; the hidden evaluations live in
 * `tasks/hidden.ts`, which only `outer/score.ts` imports.
 */
import type { TaskBrief } from '../spec/brief.js';
import type { JobSpecInput } from '../spec/schema.js';
import { supervisedBrief } from './supervised-def.js';
import { controlBrief } from './control/define.js';
import { CONTROL_TASKS } from './control/tasks.js';
import { SUPERVISED_TASKS } from './supervised/tasks.js';
import { EXAMPLE_TASKS } from './examples.js';
import { gymnasiumBrief } from './gymnasium/define.js';
import { GYMNASIUM_TASKS } from './gymnasium/tasks.js';

/** A task's public parts. */
export interface PublicTask {
  brief: TaskBrief;
  baseline: JobSpecInput;
}

const TASKS: PublicTask[] = [
  ...CONTROL_TASKS.map((def) => ({ brief: controlBrief(def), baseline: def.baseline })),
  ...SUPERVISED_TASKS.map((def) => ({ brief: supervisedBrief(def), baseline: def.baseline })),
  ...EXAMPLE_TASKS.map((def) => ({ brief: supervisedBrief(def), baseline: def.baseline })),
  ...GYMNASIUM_TASKS.map((def) => ({ brief: gymnasiumBrief(def), baseline: def.baseline })),
];

/** Every task's public parts, in registry order. */
export function listTasks(): PublicTask[] {
  return TASKS;
}

/** A task's public parts by id; the error lists the known ids. */
export function getPublicTask(id: string): PublicTask {
  const t = TASKS.find((x) => x.brief.id === id);
  if (!t) throw new Error(`unknown task "${id}"; known tasks: ${TASKS.map((x) => x.brief.id).join(', ')}`);
  return t;
}

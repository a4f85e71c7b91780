/**
 * The public side of the task registry: briefs and baseline specs only, built from the public
 * definition files (each source folder's `define.ts` and `tasks.ts`). Anything that runs jobs
 * (inner/, run/, agents) may import this; it reaches no evaluate file. The evaluations live
 * behind `tasks/hidden.ts`, which only `outer/scoring/hidden-score.ts` imports.
 */
import type { TaskBrief } from '../spec/brief.js';
import type { JobSpecInput } from '../spec/schema.js';
import { supervisedBrief } from './supervised/define.js';
import { controlBrief } from './control/define.js';
import { CONTROL_TASKS } from './control/tasks.js';
import { SUPERVISED_TASKS } from './supervised/tasks.js';
import { EXAMPLE_TASKS } from './supervised/examples.js';
import { gymnasiumBrief } from './gymnasium/define.js';
import { GYMNASIUM_TASKS } from './gymnasium/tasks.js';
import { type ExtraTask, extraTasks } from './extra.js';

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

const EXTRA_PUBLIC = new WeakMap<ExtraTask, PublicTask>();

/** The public parts of a task registered at run time (built once per registration). */
function extraPublic(t: ExtraTask): PublicTask {
  let p = EXTRA_PUBLIC.get(t);
  if (!p) {
    if (t.kind === 'control') p = { brief: gymnasiumBrief(t.def), baseline: t.def.baseline };
    else if (t.kind === 'control-sim') p = { brief: controlBrief(t.def), baseline: t.def.baseline };
    else p = { brief: supervisedBrief(t.def), baseline: t.def.baseline };
    EXTRA_PUBLIC.set(t, p);
  }
  return p;
}

/** Every task's public parts, in registry order: the built-in tasks, then those registered at run time (extra.ts). */
export function listTasks(): PublicTask[] {
  return [...TASKS, ...extraTasks().map(extraPublic)];
}

/** A task's public parts by id; the error lists the known ids. */
export function getPublicTask(id: string): PublicTask {
  const all = listTasks();
  const t = all.find((x) => x.brief.id === id);
  if (!t) throw new Error(`unknown task "${id}"; known tasks: ${all.map((x) => x.brief.id).join(', ')}`);
  return t;
}

/**
 * Task families: generators of tasks from seeded parameter spaces. Each
 * family lives in its own folder: `define.ts` draws the parameters and writes the public
 * definition and brief from them; `evaluate.ts` holds what only the hidden evaluation knows and is
 * reached only through `evaluate.ts` here, from `tasks/hidden.ts`.
 * Generated tasks are registered like any task added at run time: `registerTasks(generateFamilyTasks(...))`.
 */
import { type ExtraTask, registerTasks } from '../extra.js';
import { acrobotFamily } from './acrobot/define.js';
import { blobsFamily } from './blobs/define.js';
import { cartpoleFamily } from './cartpole/define.js';
import { countsFamily } from './counts/define.js';
import { friedmanFamily } from './friedman/define.js';
import { mountainCarFamily } from './mountain-car/define.js';
import { pendulumFamily } from './pendulum/define.js';
import { pointMassFamily } from './point-mass/define.js';
import { ringsFamily } from './rings/define.js';
import { syntheticFamily } from './synthetic/define.js';
import { tabularFamily } from './tabular/define.js';
import { vegaMoreFamily } from './vega-more/define.js';
import { type TaskFamily, parseFamilyTaskId } from './types.js';

/** The shape every task family shares (`types.ts`). */
export type { TaskFamily } from './types.js';

/** Every task family, by name. */
export const FAMILIES: Record<string, TaskFamily> = {
  [cartpoleFamily.name]: cartpoleFamily,
  [tabularFamily.name]: tabularFamily,
  [syntheticFamily.name]: syntheticFamily,
  [pendulumFamily.name]: pendulumFamily,
  [mountainCarFamily.name]: mountainCarFamily,
  [blobsFamily.name]: blobsFamily,
  [friedmanFamily.name]: friedmanFamily,
  // Held out as whole families: never in meta-training.
  [acrobotFamily.name]: acrobotFamily,
  [vegaMoreFamily.name]: vegaMoreFamily,
  [ringsFamily.name]: ringsFamily,
  [pointMassFamily.name]: pointMassFamily,
  [countsFamily.name]: countsFamily,
};

/**
 * `count` tasks of `family` drawn with `seed` (ids `<family>-fam-<seed>-<n>`): the same arguments
 * always give the same tasks. The error for an unknown family lists the known ones.
 */
export function generateFamilyTasks(family: string, count: number, seed: number): ExtraTask[] {
  const f = FAMILIES[family];
  if (!f) throw new Error(`unknown task family "${family}"; known families: ${Object.keys(FAMILIES).join(', ')}`);
  if (!Number.isInteger(count) || count < 0) throw new Error(`count must be a non-negative integer, got ${count}`);
  if (!Number.isInteger(seed)) throw new Error(`seed must be an integer, got ${seed}`);
  // Every task carries its family's split: a held-out family is held out as a whole.
  return f.generate(count, seed).map((t) => ({ ...t, def: { ...t.def, split: f.split } }) as ExtraTask);
}

/** One family draw registered in this thread (what a scorer thread repeats to know the same tasks). */
export interface FamilyDraw {
  family: string;
  count: number;
  seed: number;
}

const DRAWS = new Map<string, FamilyDraw>();
/** The largest draw generated per family and seed: a smaller or equal draw is its first tasks, not drawn again. */
const DRAWN = new Map<string, ExtraTask[]>();

/**
 * Generates `count` tasks of `family` with `seed` and registers them (`registerTasks`), remembering
 * the draw so that scorer threads register the same tasks (`registeredFamilyDraws`). Returns the tasks.
 * A draw already generated in this thread is taken from memory: a scorer thread repeats every
 * registered draw before each scoring, and drawing a preset's hundreds of tasks each time cost more
 * than the scoring.
 */
export function registerFamilyTasks(family: string, count: number, seed: number): ExtraTask[] {
  const key = `${family}/${seed}`;
  const drawn = DRAWN.get(key);
  const tasks = drawn && drawn.length >= count ? drawn.slice(0, count) : generateFamilyTasks(family, count, seed);
  if (!drawn || drawn.length < tasks.length) DRAWN.set(key, tasks);
  registerTasks(tasks);
  const known = DRAWS.get(key);
  if (!known || known.count < count) DRAWS.set(key, { family, count, seed });
  return tasks;
}

/**
 * Registers the draw a family task's id names (`<family>-fam-<seed>-<n>`: the first n + 1 tasks of
 * `family` drawn with `seed`, the same tasks a larger draw starts with), so that a task seen in a
 * run can be named on its own. Returns false, registering nothing, when the id names no family's task.
 */
export function registerFamilyTaskId(id: string): boolean {
  const named = parseFamilyTaskId(id);
  if (!named || !FAMILIES[named.family]) return false;
  // Drawing a task draws every one before it: a bound keeps a hostile id from drawing millions.
  if (named.seed > 2 ** 31 - 1 || named.index >= MAX_DRAWN_BY_ID) return false;
  registerFamilyTasks(named.family, named.index + 1, named.seed);
  return true;
}

/** The most tasks an id alone may draw (`registerFamilyTaskId`): far above any preset's draw. */
const MAX_DRAWN_BY_ID = 1_000;

/** The family draws registered in this thread, for the scorer threads. */
export function registeredFamilyDraws(): FamilyDraw[] {
  return [...DRAWS.values()];
}

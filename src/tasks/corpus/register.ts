/**
 * Registers the corpus's tasks like family tasks (`registerTasks`): the build is made once per
 * thread and directory, and every registration is remembered as a draw — the directory and each
 * task's id, table and target — so that a scorer thread registers the task it scores from its
 * table alone (`registerCorpusDraws`), with the same definition and fingerprint.
 */
import { type ExtraTask, registerTasks } from '../extra.js';
import { type CorpusTask, buildCorpusTask, corpusBuild } from './build.js';
import type { CorpusSplit } from './splits.js';
import { corpusFamily } from './define.js';
import { CorpusError, corpusDir } from './where.js';
import { hashString } from '../../util/rng.js';

/** One corpus task as a scorer thread needs it named. */
export interface CorpusDrawTask {
  id: string;
  package: string;
  item: string;
  target: string;
}

/** The corpus tasks registered in this thread from one directory (what a scorer thread repeats). */
export interface CorpusDraw {
  dir: string;
  tasks: CorpusDrawTask[];
}

/** The registry's entry of a corpus task. */
export function corpusExtraTask(t: CorpusTask, dir: string): ExtraTask {
  return {
    kind: 'supervised',
    def: t.def,
    origin: `corpus ${dir}`,
    madeFrom: { corpus: { package: t.package, item: t.item, target: t.target, sha256: t.sha256 } },
  };
}

const DRAWS = new Map<string, Map<string, CorpusDrawTask>>();

function remember(dir: string, tasks: CorpusTask[]): void {
  let known = DRAWS.get(dir);
  if (!known) DRAWS.set(dir, (known = new Map()));
  for (const t of tasks) known.set(t.id, { id: t.id, package: t.package, item: t.item, target: t.target });
}

/**
 * Builds the corpus in `dir` (default: `corpusDir()`) once per thread and registers its tasks of
 * `splits` (default: every split). Returns the tasks registered.
 */
export async function registerCorpusTasks(o: { dir?: string; splits?: readonly CorpusSplit[] } = {}): Promise<CorpusTask[]> {
  const dir = o.dir ?? corpusDir();
  const build = await corpusBuild(dir);
  const tasks = o.splits ? build.tasks.filter((t) => o.splits!.includes(t.split)) : build.tasks;
  registerTasks(tasks.map((t) => corpusExtraTask(t, dir)));
  remember(dir, tasks);
  return tasks;
}

/** Which corpus tasks a command serves: up to `perPackage` of each package of `split`, of `packages` only when given. */
export interface CorpusSelection {
  split: CorpusSplit;
  perPackage: number;
  /** Package names (any case); absent: every package of the split. */
  packages?: string[];
}

/** Draws `n` of `ids` by a seeded hash order (the same draw on every machine; a larger `n` keeps the smaller draw's tasks). */
export function drawCorpusIds(ids: string[], n: number): string[] {
  return [...ids].sort((a, b) => hashString(a) - hashString(b) || (a < b ? -1 : 1)).slice(0, n);
}

/**
 * The tasks of `sel` among `tasks`, in package order (packages sorted by name), each package's by
 * `drawCorpusIds`; throws a `CorpusError` naming a requested package the split does not hold.
 */
export function selectCorpusTasks(tasks: readonly CorpusTask[], sel: CorpusSelection): CorpusTask[] {
  const inSplit = tasks.filter((t) => t.split === sel.split);
  const all = [...new Set(inSplit.map((t) => t.package))].sort();
  const wanted = sel.packages?.map((p) => p.toLowerCase());
  const missing = wanted?.filter((w) => !all.some((p) => p.toLowerCase() === w)) ?? [];
  if (missing.length) throw new CorpusError(`the corpus split ${sel.split} holds no package ${missing.join(', ')}; it holds ${all.join(', ')}`);
  const packages = wanted ? all.filter((p) => wanted.includes(p.toLowerCase())) : all;
  const byId = new Map(inSplit.map((t) => [t.id, t]));
  return packages.flatMap((p) =>
    drawCorpusIds(
      inSplit.filter((t) => t.package === p).map((t) => t.id),
      sel.perPackage,
    ).map((id) => byId.get(id)!),
  );
}

/** Builds the corpus in `dir` once per thread and registers the tasks of `selections` alone. Returns them, in selection order. */
export async function registerCorpusSelection(selections: readonly CorpusSelection[], dir: string = corpusDir()): Promise<CorpusTask[]> {
  const build = await corpusBuild(dir);
  const chosen = new Map<string, CorpusTask>();
  for (const sel of selections) for (const t of selectCorpusTasks(build.tasks, sel)) chosen.set(t.id, t);
  const tasks = [...chosen.values()];
  registerTasks(tasks.map((t) => corpusExtraTask(t, dir)));
  remember(dir, tasks);
  return tasks;
}

/** The family of a corpus task registered in this thread (its package's: `corpusFamily`), or undefined for any other id. */
export function corpusFamilyOf(id: string): string | undefined {
  for (const known of DRAWS.values()) {
    const t = known.get(id);
    if (t) return corpusFamily(t.package);
  }
  return undefined;
}

/** The corpus tasks registered in this thread, by directory, for the scorer threads. */
export function registeredCorpusDraws(): CorpusDraw[] {
  return [...DRAWS.entries()].map(([dir, tasks]) => ({ dir, tasks: [...tasks.values()] }));
}

const SINGLE = new Map<string, Promise<CorpusTask | null>>();

/**
 * Registers, from the draws a harness sent, the corpus task `taskId` (when one of them names it),
 * built from its table alone and kept for the thread. Returns whether it was registered.
 */
export async function registerCorpusDraws(draws: CorpusDraw[], taskId: string): Promise<boolean> {
  for (const d of draws) {
    const want = d.tasks.find((t) => t.id === taskId);
    if (!want) continue;
    const key = `${d.dir}\n${want.id}`;
    let built = SINGLE.get(key);
    if (!built) SINGLE.set(key, (built = buildCorpusTask(d.dir, want)));
    const task = await built;
    if (!task) return false;
    registerTasks([corpusExtraTask(task, d.dir)]);
    return true;
  }
  return false;
}

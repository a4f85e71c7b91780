/** The shape every task family shares (see `index.ts`). */
import type { ExtraTask } from '../extra.js';
import type { EnvInfo, PhysParams } from '../../inner/envs/types.js';
import type { TunableParam } from '../../spec/brief.js';
import { Rng, mixSeed } from '../../util/rng.js';

/** A generator of tasks from a seeded parameter space. */
export interface TaskFamily {
  /** The family's name, the prefix of its task ids (`<name>-fam-<seed>-<n>`). */
  name: string;
  kind: 'control' | 'supervised';
  /**
   * `train`: its tasks may be used in meta-training; `held-out`: a whole family kept for testing
   * transfer, never shown to an agent during meta-training (every task it generates carries this split).
   */
  split: 'train' | 'held-out';
  /** One sentence on what varies from task to task. */
  description: string;
  /** `count` tasks drawn with `seed`; the same arguments always give the same tasks. */
  generate(count: number, seed: number): ExtraTask[];
}

/** The id of the `index`-th task a family generates with `seed`. */
export function familyTaskId(family: string, seed: number, index: number): string {
  return `${family}-fam-${seed}-${index}`;
}

/** The family, seed and index a `familyTaskId` names, or null for an id of another shape. */
export function parseFamilyTaskId(id: string): { family: string; seed: number; index: number } | null {
  const m = /^(.+)-fam-(\d+)-(\d+)$/.exec(id);
  return m ? { family: m[1], seed: Number(m[2]), index: Number(m[3]) } : null;
}

/** The registration origin of a family's tasks drawn with `seed` (one origin per family and seed). */
export function familyOrigin(family: string, seed: number): string {
  return `family ${family} (seed ${seed})`;
}

/** A uniform integer in [lo, hi] (both included). */
export function intIn(rng: Rng, [lo, hi]: readonly [number, number]): number {
  return lo + rng.int(hi - lo + 1);
}

/** Rounds to `digits` significant figures (parameters a brief states in words). */
export function sig(v: number, digits = 3): number {
  return Number(v.toPrecision(digits));
}

/** Every corner of the band ±`shift` around `nominal` (the nominal physics alone when there is no shift). */
export function bandCorners(nominal: PhysParams, shift: number): PhysParams[] {
  let out: PhysParams[] = [{ ...nominal }];
  if (shift === 0) return out;
  for (const [name, v] of Object.entries(nominal))
    out = out.flatMap((p) => [
      { ...p, [name]: v * (1 - shift) },
      { ...p, [name]: v * (1 + shift) },
    ]);
  return out;
}

/** The parameters of a simulated task with a deployment shift: its nominal physics, the shift band and its budget cap. */
export interface ShiftedPhysics {
  nominal: PhysParams;
  shift: number;
  budget: number;
}

/**
 * Draws a shift and a budget cap from `space`, then nominal physics (each `tuned` parameter
 * uniform in its range, to 3 significant digits) until `feasible` holds at every corner of the
 * deployment band; after 100 tries, `defaults`.
 */
export function drawShiftedPhysics<K extends string>(
  rng: Rng,
  space: { shifts: readonly number[]; budgets: readonly number[] } & Record<K, readonly [number, number]>,
  tuned: readonly K[],
  feasible: (p: PhysParams) => boolean,
  defaults: PhysParams,
): ShiftedPhysics {
  const shift = space.shifts[rng.int(space.shifts.length)];
  const budget = space.budgets[rng.int(space.budgets.length)];
  for (let tries = 0; tries < 100; tries++) {
    const nominal: PhysParams = {};
    for (const name of tuned) nominal[name] = sig(rng.uniform(space[name][0], space[name][1]));
    if (bandCorners(nominal, shift).every(feasible)) return { nominal, shift, budget };
  }
  return { nominal: { ...defaults }, shift, budget };
}

/** The public definition a task of kind `K` carries. */
type DefOf<K extends FamilyKind> = Extract<ExtraTask, { kind: K }>['def'];
type FamilyKind = 'control-sim' | 'supervised';

/**
 * A family's `generate`: one seeded parameter stream per (family salt, seed); for each task, in
 * order, `draw` draws its parameters from the stream and `define` writes its public definition from
 * them (with its id, index and the seed). Every task's origin is the family's draw, and it was made
 * from the family and the parameters drawn.
 */
export function drawTasks<P, K extends FamilyKind>(
  name: string,
  salt: number,
  kind: K,
  draw: (rng: Rng) => P,
  define: (id: string, params: P, index: number, seed: number) => DefOf<K>,
): TaskFamily['generate'] {
  return (count, seed) => {
    const rng = new Rng(mixSeed(seed, salt));
    return Array.from({ length: count }, (_, i) => {
      const params = draw(rng);
      const def = define(familyTaskId(name, seed, i), params, i, seed);
      return { kind, def, origin: familyOrigin(name, seed), madeFrom: { family: name, params } } as ExtraTask;
    });
  };
}

/** A generated control task's tunable parameters: the simulator's ranges and words, the task's nominal values as defaults. */
export function nominalParams(info: EnvInfo, names: readonly string[], nominal: PhysParams): TunableParam[] {
  return names.map((name) => {
    const q = info.params.find((x) => x.name === name);
    if (!q) throw new Error(`${info.id} has no parameter "${name}"`);
    return { name, min: q.min, max: q.max, default: nominal[name], description: q.description };
  });
}

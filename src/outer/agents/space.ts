/**
 * The discrete design space the embedded agents choose from, built from a task's brief:
 * each head is one decision (algorithm, a hyperparameter, a reward term, domain
 * randomisation, the share of the budget), declared once in `space-heads.ts`. From those
 * declarations come a brief's heads, `decode` (one choice per head → a complete job spec), its
 * inverse `nearestChoice`, the optimisers' parameters (`searchParams`), a learning agent's output
 * slots (`HEAD_NAMES`, `headLayout`) and the published description (`describeSpace`). Heads that
 * do not apply to the chosen algorithm are marked unused, so they do not enter the log-probability.
 */
import { isDeepStrictEqual } from 'node:util';
import type { TaskBrief } from '../../spec/brief.js';
import type { JobSpecInput } from '../../spec/schema.js';
import { ALGORITHM_ORDER, CONTROL_HEADS, type Draft, type HeadDeclaration, SOURCE_IDS, SUPERVISED_HEADS, at, draftSpec } from './space-heads.js';

export { ALGORITHM_ORDER, SOURCE_IDS } from './space-heads.js';

/** One decision of a brief with its options (values are JSON), and the declaration it comes from. */
export interface Head {
  name: string;
  options: readonly unknown[];
  /** When set, the head only matters for this algorithm. */
  algorithm?: string;
  declaration: HeadDeclaration;
}

/** The name of every output slot, by its number in the declarations (two declarations of one slot must name it alike). */
function slotNames(): string[] {
  const names: string[] = [];
  for (const d of [...SUPERVISED_HEADS, ...CONTROL_HEADS]) {
    const keys = d.perSource ? SOURCE_IDS.map((id) => `source:${id}`) : [d.slotName ?? d.name];
    keys.forEach((key, i) => {
      const slot = d.slot + i;
      if (names[slot] !== undefined && names[slot] !== key) throw new Error(`design space: slot ${slot} is declared as "${names[slot]}" and "${key}"`);
      names[slot] = key;
    });
  }
  const hole = Array.from(names, (n) => n === undefined).indexOf(true);
  if (hole >= 0) throw new Error(`design space: no head declares slot ${hole}`);
  return names;
}

/**
 * Every head name any brief can produce, by output slot. A learning agent gives each name its own
 * output slot, so a decision keeps its meaning across tasks whose briefs have different heads (a
 * task with five sources and one with six; a task that allows one algorithm and one that allows four).
 */
export const HEAD_NAMES: readonly string[] = slotNames();

/**
 * Where a brief's heads live in a learning agent's fixed output: for each head its slot in
 * `HEAD_NAMES` (control heads that share a name with a supervised one are namespaced) and the
 * slot of each option (the algorithm head's options by `ALGORITHM_ORDER`, others by position).
 */
export function headLayout(heads: Head[]): { slot: number; optionSlots: number[] }[] {
  // A source of a user's task file (any id) takes, in catalogue order, a standard source's slot
  // that the brief does not use itself: a catalogue has at most as many sources as there are slots.
  const own = heads.map((h) => h.name).filter((n) => n.startsWith('source:') && !HEAD_NAMES.includes(n));
  const free = SOURCE_IDS.map((id) => `source:${id}`).filter((n) => !heads.some((h) => h.name === n));
  return heads.map((h) => {
    const mapped = own.includes(h.name) ? free[own.indexOf(h.name)] : undefined;
    if (own.includes(h.name) && !mapped) {
      throw new Error(`design space: the task has more than ${SOURCE_IDS.length} sources; the embedded agents take at most ${SOURCE_IDS.length}`);
    }
    const slot = HEAD_NAMES.indexOf(mapped ?? h.declaration.slotName ?? h.name);
    if (slot < 0) throw new Error(`design space: head "${h.name}" has no slot in HEAD_NAMES`);
    const optionSlots = h.name === 'algorithm' ? h.options.map((o) => ALGORITHM_ORDER.indexOf(o as never)) : h.options.map((_, i) => i);
    if (optionSlots.some((o) => o < 0)) throw new Error(`design space: unknown algorithm in ${JSON.stringify(h.options)}`);
    return { slot, optionSlots };
  });
}

/** The heads for a brief, in the declarations' order (without the heads of algorithms the brief does not allow). */
export function buildHeads(brief: TaskBrief): Head[] {
  const table = brief.kind === 'supervised' ? SUPERVISED_HEADS : CONTROL_HEADS;
  return table
    .filter((d) => !d.algorithm || brief.algorithms.includes(d.algorithm as never))
    .flatMap((d) => {
      const options = typeof d.options === 'function' ? d.options(brief) : d.options;
      const names = d.perSource ? brief.supervised!.sources.map((s) => `source:${s.id}`) : [d.name];
      return names.map((name) => ({ name, options, ...(d.algorithm ? { algorithm: d.algorithm } : {}), declaration: d }));
    });
}

/** The chosen option of any head by name; throws on a name the heads lack. */
function chosenValues(heads: Head[], choice: number[]): (name: string) => unknown {
  return (name) => {
    const i = heads.findIndex((h) => h.name === name);
    if (i < 0) throw new Error(`no head "${name}"`);
    return heads[i].options[choice[i]];
  };
}

/** Which heads count for a choice (shared heads, and those of the chosen algorithm, unless another decision makes them moot). */
export function activeHeads(heads: Head[], choice: number[]): boolean[] {
  const value = chosenValues(heads, choice);
  const algo = value('algorithm');
  return heads.map((h) => (!h.algorithm || h.algorithm === algo) && (h.declaration.activeWhen?.(value) ?? true));
}

/** Turns one option index per head into a complete job spec for the brief: each head writes its option where it lands. */
export function decode(brief: TaskBrief, heads: Head[], choice: number[], seed: number): JobSpecInput {
  const value = chosenValues(heads, choice);
  const algo = value('algorithm') as string;
  const spec = draftSpec(brief, algo, seed);
  heads.forEach((h, i) => {
    const d = h.declaration;
    if (d.algorithm && d.algorithm !== algo) return;
    if (d.write) d.write(spec, h.options[choice[i]], { brief, name: h.name, value });
    else writeAt(spec, d.path, d.bound ? d.bound(h.options[choice[i]], brief) : h.options[choice[i]]);
  });
  return spec as JobSpecInput;
}

/** Sets the field at `path` of a draft (whose sections are all there). */
function writeAt(spec: Draft, path: readonly string[], value: unknown): void {
  let node: Record<string, unknown> = spec;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string, unknown>;
  node[path[path.length - 1]] = value;
}

const isPlainObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/**
 * A choice written relative to a baseline spec: `chosen` is `decode` of the choice, `anchor` is
 * `decode` of the baseline's nearest choice (`nearestChoice`). Where the two agree the baseline's
 * own value stands (a value off the design space's grid, a field the space does not write); where
 * they differ the chosen value is taken, and an object naming another kind (an algorithm of
 * another `name`) is taken whole. So the baseline's nearest choice writes the baseline spec itself,
 * and every head changed from it writes what `decode` writes. The seed is `chosen`'s.
 */
export function overlayOnBaseline(baseline: unknown, chosen: JobSpecInput, anchor: JobSpecInput): JobSpecInput {
  const merge = (base: unknown, a: unknown, b: unknown): unknown => {
    if (isDeepStrictEqual(a, b)) return base === undefined ? a : base;
    if (!isPlainObject(a) || !isPlainObject(b) || !isPlainObject(base) || a.name !== b.name || ('name' in base && base.name !== a.name)) return a;
    const out: Record<string, unknown> = {};
    for (const k of new Set([...Object.keys(base), ...Object.keys(a)])) {
      const v = k in a ? merge(base[k], a[k], b[k]) : base[k];
      if (v !== undefined) out[k] = v;
    }
    return out;
  };
  return { ...(merge(baseline, chosen, anchor) as JobSpecInput), seed: chosen.seed };
}

/** A value a general-purpose optimiser takes as a categorical choice. */
export type PlainChoice = string | number | boolean | null;

/**
 * One head as a parameter of a general-purpose optimiser (Optuna's samplers): a head whose options
 * are all numbers is a range from the least to the greatest, `int` when they are all integers and
 * log-scaled when they are all positive and span a factor of `LOG_SPAN` or more (learning rates, env
 * steps, batch sizes: options spaced by factors); any other head is a categorical over its options
 * (an array option as its JSON text). A head with one option is no parameter. `pointChoice` maps a
 * point back to one option per head, so the optimiser's proposals decode to the same specs the
 * controller's and the searches' choices do.
 */
export type SearchParam =
  | { name: string; kind: 'float' | 'int'; low: number; high: number; log: boolean }
  | { name: string; kind: 'categorical'; choices: PlainChoice[] };

/** The least ratio of the greatest to the least option that makes a numeric head log-scaled. */
export const LOG_SPAN = 4;

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const plain = (o: unknown): PlainChoice => (o === null || ['string', 'number', 'boolean'].includes(typeof o) ? (o as PlainChoice) : JSON.stringify(o));

/** The numeric range of a head whose options are all numbers (null for any other head). */
function numericRange(h: Head): { low: number; high: number; log: boolean; int: boolean } | null {
  if (!h.options.every(isNumber)) return null;
  const xs = h.options as number[];
  const low = Math.min(...xs);
  const high = Math.max(...xs);
  return { low, high, log: low > 0 && high / low >= LOG_SPAN, int: xs.every((x) => Number.isInteger(x)) };
}

/** The heads as an optimiser's parameters (see `SearchParam`), in head order, without one-option heads. */
export function searchParams(heads: Head[]): SearchParam[] {
  const out: SearchParam[] = [];
  for (const h of heads) {
    if (new Set(h.options.map((o) => JSON.stringify(o))).size < 2) continue;
    const r = numericRange(h);
    if (r) out.push({ name: h.name, kind: r.int ? 'int' : 'float', low: r.low, high: r.high, log: r.log });
    else {
      const choices = h.options.map(plain);
      if (new Set(choices.map((c) => JSON.stringify(c))).size !== choices.length) throw new Error(`design space: head "${h.name}" has options that read alike`);
      out.push({ name: h.name, kind: 'categorical', choices });
    }
  }
  return out;
}

/** The option of a numeric head nearest `x` (on the head's log scale when it has one; the first of a tie). */
function nearestNumber(h: Head, x: number): number {
  const r = numericRange(h)!;
  const f = (v: number): number => (r.log ? Math.log(Math.max(v, Number.MIN_VALUE)) : v);
  let best = 0;
  h.options.forEach((o, i) => {
    if (Math.abs(f(o as number) - f(x)) < Math.abs(f(h.options[best] as number) - f(x))) best = i;
  });
  return best;
}

/** One option per head for an optimiser's point; throws, in one line, on a value the head cannot take. */
export function pointChoice(heads: Head[], point: Record<string, unknown>): number[] {
  const params = new Map(searchParams(heads).map((p) => [p.name, p]));
  return heads.map((h) => {
    const p = params.get(h.name);
    if (!p) return 0;
    if (!(h.name in point)) throw new Error(`the point has no value for "${h.name}"`);
    const v = point[h.name];
    if (p.kind === 'categorical') {
      const i = p.choices.indexOf(v as PlainChoice);
      if (i < 0) throw new Error(`"${h.name}": ${JSON.stringify(v)?.slice(0, 40)} is none of its choices`);
      return i;
    }
    if (!isNumber(v) || v < p.low - 1e-9 * Math.abs(p.low) || v > p.high + 1e-9 * Math.abs(p.high)) {
      throw new Error(`"${h.name}": ${JSON.stringify(v)?.slice(0, 40)} is outside [${p.low}, ${p.high}]`);
    }
    return nearestNumber(h, v);
  });
}

/** The optimiser's point of one option per head (the inverse of `pointChoice`). */
export function choicePoint(heads: Head[], choice: number[]): Record<string, PlainChoice> {
  const names = new Set(searchParams(heads).map((p) => p.name));
  const point: Record<string, PlainChoice> = {};
  heads.forEach((h, i) => {
    if (names.has(h.name)) point[h.name] = plain(h.options[choice[i]]);
  });
  return point;
}

/** The option of `h` nearest a value a spec holds (the first option when the spec says nothing the head can match). */
function nearestOption(h: Head, v: unknown): number {
  if (v === undefined) return 0;
  if (isNumber(v) && numericRange(h)) return nearestNumber(h, v);
  const exact = h.options.findIndex((o) => JSON.stringify(o) === JSON.stringify(v));
  if (exact >= 0) return exact;
  if (Array.isArray(v) && v.every(isNumber) && h.options.every((o) => Array.isArray(o))) {
    // A network's layers: the option nearest in depth, then in total width (log).
    const d = (o: number[]): number =>
      Math.abs(o.length - v.length) + Math.abs(Math.log1p(o.reduce((a, b) => a + b, 0)) - Math.log1p(v.reduce((a, b) => a + b, 0)));
    let best = 0;
    h.options.forEach((o, i) => {
      if (d(o as number[]) < d(h.options[best] as number[])) best = i;
    });
    return best;
  }
  return 0;
}

/** What a spec says of a head's decision (undefined: nothing; a field of another algorithm's section says nothing). */
function readHead(h: Head, spec: unknown, algo: unknown): unknown {
  const d = h.declaration;
  if (d.algorithm && d.path[0] === 'algorithm' && algo !== d.algorithm) return undefined;
  if (d.read) return d.read(spec, h.name);
  return at(spec, ...d.path) ?? d.absent;
}

/**
 * The choice nearest a spec, head by head: each head takes the option nearest what the spec says
 * of its decision (numbers on the head's scale, a network by depth and width, anything else only
 * by equality), and its first option where the spec says nothing of it (a head of another
 * algorithm). `decode` of the choice is the spec itself when the spec lies in the design space;
 * for another spec (a task's baseline) it is the nearest spec the space can write.
 */
export function nearestChoice(brief: TaskBrief, heads: Head[], spec: unknown): number[] {
  const algo = at(spec, 'algorithm', 'name');
  const choice = heads.map((h) => nearestOption(h, readHead(h, spec, algo)));
  heads.forEach((h, index) => {
    const refine = h.declaration.refine;
    if (refine) choice[index] = refine({ brief, spec, choice, index, options: h.options, decode: (c) => decode(brief, heads, c, 0) as Draft });
  });
  return choice;
}

/** One head as the published description gives it (plain JSON). */
export interface HeadDescription {
  name: string;
  /** The name of its output slot in a learning agent (`HEAD_NAMES`). */
  slot: string;
  /** The spec field it decides, dotted. */
  path: string;
  /** The algorithm it belongs to (null: every algorithm). */
  algorithm: string | null;
  /** `option`: the option is written as it is at `path`; `derived`: through its declaration's rule (the reward grammar, a share, a band). */
  writes: 'option' | 'derived';
  options: unknown[];
  /** The head as an optimiser's parameter (`searchParams`: its kind, range and log scale); null for a head of one option. */
  param: SearchParam | null;
}

/** A task's design space as published (`rrl space`, `GET /v1/tasks/{id}/space`). */
export interface SpaceDescription {
  task: string;
  kind: TaskBrief['kind'];
  /** The least ratio of a numeric head's greatest to least option that makes it log-scaled. */
  logSpan: number;
  heads: HeadDescription[];
  /** The point nearest the task's baseline spec (null without one). */
  baseline: Record<string, PlainChoice> | null;
}

/** A bounded head with its options as they land for the brief (distinct, in order); null for a head without a bound. */
function boundOptions(brief: TaskBrief, h: Head): Head | null {
  const bound = h.declaration.bound;
  if (!bound) return null;
  const seen = new Set<string>();
  const options = h.options.map((o) => bound(o, brief)).filter((o) => !seen.has(JSON.stringify(o)) && seen.add(JSON.stringify(o)));
  return { ...h, options };
}

/** A point with each bounded head's value as it lands for the brief. */
function boundPoint(brief: TaskBrief, heads: Head[], point: Record<string, PlainChoice>): Record<string, PlainChoice> {
  const out = { ...point };
  for (const h of heads) if (h.declaration.bound && h.name in out) out[h.name] = h.declaration.bound(out[h.name], brief) as PlainChoice;
  return out;
}

/** The design space of a brief as plain JSON, every view derived from the same declarations. */
export function describeSpace(brief: TaskBrief, baseline?: unknown): SpaceDescription {
  const heads = buildHeads(brief);
  const layout = headLayout(heads);
  const params = new Map(searchParams(heads).map((p) => [p.name, p]));
  return {
    task: brief.id,
    kind: brief.kind,
    logSpan: LOG_SPAN,
    heads: heads.map((h, i) => {
      const bound = boundOptions(brief, h);
      return {
        name: h.name,
        slot: HEAD_NAMES[layout[i].slot],
        path: h.declaration.path.join('.'),
        algorithm: h.algorithm ?? null,
        writes: h.declaration.write || h.declaration.perSource ? 'derived' : 'option',
        options: [...(bound ?? h).options],
        param: bound ? (searchParams([bound])[0] ?? null) : (params.get(h.name) ?? null),
      };
    }),
    baseline: baseline === undefined ? null : boundPoint(brief, heads, choicePoint(heads, nearestChoice(brief, heads, baseline))),
  };
}

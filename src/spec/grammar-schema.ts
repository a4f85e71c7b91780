/**
 * The job spec's JSON Schema in the form grammar engines accept, for structured output.
 *
 * `jobSpecJsonSchema()` is zod's draft 2020-12 export, exact but written with features grammar
 * engines handle unevenly: `prefixItems` with `items: false` (the `[low, high]` pairs),
 * `propertyNames` with a `pattern` and `maxProperties` (physical parameters by name), long
 * `maxLength` bounds (a grammar repeats the character rule up to the bound), `default`, and a
 * five-way `anyOf` of algorithms. `grammarSchema` writes the same spec in plain features only
 * (object `properties`/`required`/`additionalProperties: false`, `items` with `minItems`/`maxItems`,
 * `enum`/`const`, `anyOf`, `type`, numeric bounds), and, given the task's brief, narrows it to that
 * task: the task id as a constant, only the brief's algorithms, its parameters by name with their
 * ranges, its wrappers, demonstrations or data sources, its budget cap, the fields its kind (control
 * or supervised) requires marked required, and the other kind's fields that validation refuses left out. Every spec the
 * narrowed schema admits is still checked by the zod schema and the brief; the narrowing only keeps
 * a constrained sampler away from specs that would fail there. See docs/llm-agent.md (per engine).
 */
import type { TaskBrief } from './brief.js';
import { jobSpecJsonSchema } from './schema.js';

/** A JSON Schema node as this module reads and writes it. */
export type SchemaNode = { [key: string]: unknown };

/** Longest `maxLength` kept in the grammar form; longer strings are bounded by validation only. */
export const MAX_GRAMMAR_STRING = 64;

/** Keywords dropped everywhere: no grammar meaning, or handled unevenly across engines. */
const DROPPED = ['$schema', 'default', 'propertyNames', 'maxProperties', 'minProperties'];

/**
 * Fields the brief's validation refuses on the other kind of task when they are set (paths from
 * the spec's root): the grammar form of a task leaves them out (or, for arrays and nullable ones,
 * admits only their empty value). The other kind's remaining fields are ignored by the engine and
 * stay admitted, so specs written in full (with every default) still pass.
 */
export const KIND_ONLY_FIELDS: Record<TaskBrief['kind'], string[]> = {
  control: ['reward.expression', 'dataset.demonstrations', 'budget.envSteps'],
  supervised: ['reward.objective', 'dataset.sources', 'budget.examples'],
};

/** Fields each kind requires (the zod schema leaves them optional because the other kind omits them). */
const KIND_REQUIRED: Record<TaskBrief['kind'], string[]> = {
  control: ['reward.expression', 'budget.envSteps'],
  supervised: ['reward.objective', 'budget.examples', 'dataset', 'dataset.sources'],
};

function isNode(v: unknown): v is SchemaNode {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `node` in plain features: see the module comment. Returns a new tree. */
function plain(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(plain);
  if (!isNode(node)) return node;
  const out: SchemaNode = {};
  for (const [k, v] of Object.entries(node)) {
    if (DROPPED.includes(k)) continue;
    if (k === 'maxLength' && typeof v === 'number' && v > MAX_GRAMMAR_STRING) continue;
    out[k] = plain(v);
  }
  // A union of alternatives told apart by a constant name: oneOf and anyOf admit the same values.
  if (Array.isArray(out.oneOf) && out.anyOf === undefined) {
    out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  // A tuple whose items share one schema: `items` with a fixed length (every engine takes it).
  const prefix = out.prefixItems;
  if (Array.isArray(prefix) && prefix.length > 0 && prefix.every((p) => JSON.stringify(p) === JSON.stringify(prefix[0]))) {
    delete out.prefixItems;
    out.items = prefix[0];
    out.minItems = prefix.length;
    out.maxItems = prefix.length;
  }
  return out;
}

/** The node at `path` (dot-separated property names) under `root`, or undefined. */
export function nodeAt(root: SchemaNode, path: string): SchemaNode | undefined {
  let cur: SchemaNode | undefined = root;
  for (const key of path.split('.')) {
    const props: unknown = cur?.properties;
    cur = isNode(props) && isNode(props[key]) ? props[key] : undefined;
  }
  return cur;
}

/** The parent object node of `path` and the last key. */
function parentOf(root: SchemaNode, path: string): { parent: SchemaNode | undefined; key: string } {
  const keys = path.split('.');
  const key = keys.pop() as string;
  return { parent: keys.length ? nodeAt(root, keys.join('.')) : root, key };
}

function removeField(root: SchemaNode, path: string): void {
  const { parent, key } = parentOf(root, path);
  if (!parent || !isNode(parent.properties)) return;
  delete parent.properties[key];
  if (Array.isArray(parent.required)) parent.required = parent.required.filter((r) => r !== key);
}

function requireField(root: SchemaNode, path: string): void {
  const { parent, key } = parentOf(root, path);
  if (!parent || !isNode(parent.properties) || !(key in parent.properties)) return;
  const req = Array.isArray(parent.required) ? (parent.required as string[]) : [];
  if (!req.includes(key)) parent.required = [...req, key];
}

/** Replaces the node at `path` (keeping its description) when it exists. */
function setField(root: SchemaNode, path: string, node: SchemaNode): void {
  const { parent, key } = parentOf(root, path);
  if (!parent || !isNode(parent.properties) || !isNode(parent.properties[key])) return;
  const old = parent.properties[key] as SchemaNode;
  parent.properties[key] = { ...node, ...(old.description !== undefined ? { description: old.description } : {}) };
}

/** A number in [min, max], or a [low, high] pair within it. */
function paramNode(min: number, max: number, description: string): SchemaNode {
  const num = { type: 'number', minimum: min, maximum: max };
  return {
    anyOf: [
      { ...num, description: 'a fixed value for every episode' },
      { type: 'array', items: num, minItems: 2, maxItems: 2, description: '[low, high]: drawn uniformly at the start of every episode' },
    ],
    description,
  };
}

/** The schema narrowed to `brief` (see the module comment). */
function narrow(root: SchemaNode, brief: TaskBrief): void {
  setField(root, 'task', { type: 'string', const: brief.id });
  // Only the brief's algorithms; one left is written without the union.
  const algo = nodeAt(root, 'algorithm');
  const alts = algo && ((algo.anyOf ?? algo.oneOf) as SchemaNode[] | undefined);
  if (algo && alts) {
    const kept = alts.filter((a) => {
      const name = nodeAt(a, 'name');
      return name !== undefined && (brief.algorithms as unknown[]).includes(name.const);
    });
    delete algo.anyOf;
    delete algo.oneOf;
    if (kept.length === 1) Object.assign(algo, kept[0], { description: algo.description });
    else algo.anyOf = kept;
  }
  for (const path of KIND_REQUIRED[brief.kind]) requireField(root, path);
  // The other kind's refused fields: out, or only their empty value.
  const emptyOnly: Record<string, SchemaNode> = { 'dataset.sources': { type: 'array', maxItems: 0 }, 'dataset.demonstrations': { type: 'null' } };
  for (const path of KIND_ONLY_FIELDS[brief.kind === 'control' ? 'supervised' : 'control']) {
    if (emptyOnly[path]) setField(root, path, emptyOnly[path]);
    else removeField(root, path);
  }
  const props: SchemaNode = {};
  for (const p of brief.environment.params) props[p.name] = paramNode(p.min, p.max, p.description);
  setField(root, 'environment.params', { type: 'object', properties: props, additionalProperties: false });
  const wrappers = brief.environment.wrappers;
  setField(
    root,
    'environment.wrappers',
    wrappers.length ? { type: 'array', items: { type: 'string', enum: wrappers }, maxItems: wrappers.length } : { type: 'array', maxItems: 0 },
  );
  if (brief.kind === 'control') {
    const demos = brief.demonstrations.map((d) => d.id);
    setField(root, 'dataset.demonstrations', demos.length ? { anyOf: [{ type: 'string', enum: demos }, { type: 'null' }] } : { type: 'null' });
    setField(root, 'budget.envSteps', { type: 'integer', minimum: 1, maximum: brief.budget.maxEnvSteps });
  } else {
    const info = brief.supervised;
    if (info) {
      const objectives = info.target.type === 'classification' ? ['cross-entropy', 'focal'] : ['mse', 'huber'];
      setField(root, 'reward.objective', { type: 'string', enum: objectives });
      const sources = nodeAt(root, 'dataset.sources');
      const item = sources && isNode(sources.items) ? sources.items : undefined;
      const id = item && nodeAt(item, 'id');
      if (sources && id) {
        for (const k of Object.keys(id)) if (k !== 'description') delete id[k];
        Object.assign(id, { type: 'string', enum: info.sources.map((s) => s.id) });
        sources.minItems = 1;
        sources.maxItems = Math.min(Number(sources.maxItems ?? info.sources.length), info.sources.length);
      }
    }
    if (brief.budget.maxExamples !== undefined) setField(root, 'budget.examples', { type: 'integer', minimum: 1, maximum: brief.budget.maxExamples });
  }
}

/**
 * The job spec's JSON Schema for a grammar engine: plain features only and, given a brief,
 * narrowed to that task (see the module comment). Without a brief it admits every spec the
 * exact schema admits, save that long strings are bounded by validation rather than the grammar.
 */
export function grammarSchema(brief?: TaskBrief): SchemaNode {
  const root = plain(jobSpecJsonSchema()) as SchemaNode;
  if (brief) narrow(root, brief);
  return root;
}

/** The schema keywords a tree uses (to check that a form avoids the ones an engine rejects). */
export function schemaKeywords(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const n of node) schemaKeywords(n, out);
  else if (isNode(node)) {
    for (const [k, v] of Object.entries(node)) {
      out.add(k);
      if (k === 'properties' && isNode(v)) for (const sub of Object.values(v)) schemaKeywords(sub, out);
      else if (k !== 'enum' && k !== 'const') schemaKeywords(v, out);
    }
  }
  return out;
}

/** Drops `required` from `node` and every object it nests by property or alternative (not array items: arrays are replaced whole). */
function loosen(node: SchemaNode, keep: Set<SchemaNode> = new Set()): void {
  if (keep.has(node)) return;
  delete node.required;
  if (isNode(node.properties)) for (const sub of Object.values(node.properties)) if (isNode(sub)) loosen(sub, keep);
  if (Array.isArray(node.anyOf)) for (const alt of node.anyOf) if (isNode(alt)) loosen(alt, keep);
}

/**
 * The JSON Schema of a merge patch over the task's baseline spec (the patch form of an answer,
 * outer/answer.ts), for a grammar engine: `grammarSchema(brief)` without the `task` field (a
 * patch has none) and with no field required at any level (a patch names only what it changes),
 * `additionalProperties: false` and the bounds kept. The items of an array stay whole (a patch
 * replaces an array whole). Removals (`null`) are not in it: a guided patch sets values. A patch
 * that names another algorithm than `baseline`'s replaces the algorithm
 * section, so those alternatives keep their required fields; only the baseline's own is loosened.
 */
export function patchGrammarSchema(brief: TaskBrief, baseline?: unknown): SchemaNode {
  const root = grammarSchema(brief);
  const base = isNode(baseline) && isNode(baseline.algorithm) ? baseline.algorithm.name : undefined;
  if (isNode(root.properties)) delete root.properties.task;
  const algorithm = isNode(root.properties) ? root.properties.algorithm : undefined;
  const alternatives = isNode(algorithm) && Array.isArray(algorithm.anyOf) ? algorithm.anyOf.filter(isNode) : [];
  const switches = alternatives.filter((alt) => {
    const name = isNode(alt.properties) && isNode(alt.properties.name) ? alt.properties.name.const : undefined;
    return name !== base;
  });
  loosen(root, new Set(switches));
  return root;
}

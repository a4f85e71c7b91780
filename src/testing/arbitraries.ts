/**
 * fast-check generators for the property-based tests: valid job specs (control and
 * supervised), almost-valid ones (one field mutated), hostile JSON values, reward expressions
 * and token soups. Shared by the property tests of validation, the expression compiler and
 * the store. Every generator is plain data; the tests fix fast-check's seed.
 */
import fc from 'fast-check';
import type { TaskBrief } from '../spec/brief.js';
import { ALLOWED_FUNCTIONS } from '../inner/expr/expression.js';

/** An object nested `depth` levels deep, built without recursion. */
export function deepValue(depth: number, key = 'a'): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { [key]: v };
  return v;
}

/** Asserts nothing; returns why `message` is not one short line (null when it is). */
export function notOneLine(message: unknown, max: number): string | null {
  if (typeof message !== 'string') return `not a string: ${typeof message}`;
  if (message.length === 0) return 'empty';
  if (message.length > max) return `${message.length} characters (limit ${max})`;
  if (/[\n\r]/.test(message)) return 'more than one line';
  return null;
}

// ---------------------------------------------------------------------------------------------
// Expressions.

const NUMBER_LITERAL = fc.oneof(
  fc.integer({ min: 0, max: 1000 }).map(String),
  fc.double({ min: 0, max: 1e6, noNaN: true }).map((d) => String(Math.round(d * 1000) / 1000)),
  fc.constantFrom('pi', 'e', '0.5', '1e-3', '2.4'),
);
const BINARY_OPS = ['+', '-', '*', '/', '%', 'mod', '<', '<=', '>', '>=', '==', '!=', 'and', 'or'];

/** A grammatical expression over `variables` (whatever its value: it may still fold to Infinity). */
export function expressionArb(variables: readonly string[], maxDepth = 5): fc.Arbitrary<string> {
  const leaf = fc.oneof(variables.length ? fc.constantFrom(...variables) : NUMBER_LITERAL, NUMBER_LITERAL);
  const { expr } = fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', maxDepth, withCrossShrink: true },
      leaf,
      fc.tuple(tie('expr'), fc.constantFrom(...BINARY_OPS), tie('expr')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
      tie('expr').map((a) => `-(${a})`),
      tie('expr').map((a) => `not (${a})`),
      fc.tuple(tie('expr'), fc.integer({ min: -8, max: 8 })).map(([a, k]) => `(${a}) ^ ${k < 0 ? `(${k})` : k}`),
      fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([c, a, b]) => `(${c}) ? (${a}) : (${b})`),
      fc
        .tuple(fc.constantFrom(...ALLOWED_FUNCTIONS), fc.array(tie('expr'), { minLength: 3, maxLength: 3 }))
        .map(([f, args]) => `${f}(${args.slice(0, ARITY[f] ?? 1).join(', ')})`),
    ),
  }));
  return expr;
}

const ARITY: Record<string, number> = { min: 2, max: 3, clip: 3, log: 2 };

const SOUP_TOKENS = [
  'x',
  'r',
  't',
  'done',
  'theta',
  'foo',
  'constructor',
  '__proto__',
  'prototype',
  'process',
  'eval',
  'import',
  'require',
  'this',
  'globalThis',
  'Function',
  'pi',
  'e',
  'Infinity',
  'NaN',
  'true',
  'false',
  'null',
  'undefined',
  'i',
  'end',
  '0',
  '1',
  '2.5',
  '1e6',
  '1e308',
  '1e999',
  '0x1F',
  '0b101',
  '-0',
  '.5',
  '1e-400',
  '+',
  '-',
  '*',
  '/',
  '^',
  '%',
  'mod',
  '!',
  "'",
  '.*',
  './',
  '.^',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '=',
  ':=',
  '?',
  ':',
  'and',
  'or',
  'not',
  'xor',
  '&',
  '|',
  '~',
  '<<',
  '>>',
  '>>>',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  ';',
  '.',
  '\n',
  '"s"',
  "'s'",
  '#',
  'to',
  'in',
  'cm',
  'deg',
  '@',
  '$',
  '\\',
  '`',
  ...ALLOWED_FUNCTIONS,
  'sum',
  'f(x)=x',
  'x.constructor',
  'x["a"]',
  'import("fs")',
];

/** A random soup of expression tokens (hostile names, operators, brackets), joined with or without spaces. */
export const tokenSoupArb: fc.Arbitrary<string> = fc
  .tuple(fc.array(fc.constantFrom(...SOUP_TOKENS), { minLength: 0, maxLength: 24 }), fc.boolean())
  .map(([tokens, spaced]) => tokens.join(spaced ? ' ' : ''));

// ---------------------------------------------------------------------------------------------
// Hostile JSON values.

const NASTY_STRINGS = [
  'NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '-0',
  '__proto__',
  'constructor',
  'toString',
  '\u0000',
  '\ud800',
  '\u2028',
  '"',
  '\\',
  '{}',
  '</script>',
  'null',
];
const NASTY_NUMBERS = [Number.NaN, Infinity, -Infinity, -0, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53 + 1, 1e308, 1e-308, 4294967296, -1];

/** A hostile JSON-ish leaf: nasty strings and numbers, huge strings, anything small. */
const hostileLeaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.constantFrom(...NASTY_NUMBERS),
  fc.double(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.integer({ min: 1, max: 100_000 }).map((n) => 'x'.repeat(n)),
  fc.constantFrom(null, true, false, undefined),
);

/** Hostile values: random JSON, deep and wide values, prototype keys, huge numbers, NaN-like strings. */
export const hostileValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }),
  fc.anything({
    maxDepth: 4,
    withNullPrototype: true,
    withBoxedValues: true,
    withMap: true,
    withSet: true,
    withTypedArray: true,
    withSparseArray: true,
    withDate: true,
    withObjectString: true,
  }),
  hostileLeaf,
  fc.integer({ min: 1, max: 8000 }).map((n) => deepValue(n)),
  fc.integer({ min: 1, max: 8000 }).map((n) => JSON.parse('['.repeat(n) + ']'.repeat(n)) as unknown),
  fc.integer({ min: 1, max: 10_000 }).map((n) => Array.from({ length: n }, (_, i) => i)),
  fc.integer({ min: 1, max: 6000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
  fc
    .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.jsonValue({ maxDepth: 2 }))
    .map(([k, v]) => JSON.parse(`{${JSON.stringify(k)}: ${JSON.stringify(v ?? null)}}`) as unknown),
  fc.dictionary(fc.string({ maxLength: 8 }), hostileLeaf, { maxKeys: 8 }),
);

// ---------------------------------------------------------------------------------------------
// Specs.

/**
 * A valid control spec for `brief` (cartpole-like: its params, wrappers and algorithms), kept
 * small (few units, few envs, small budget) so that no compute bound refuses it.
 */
export function controlSpecArb(brief: TaskBrief): fc.Arbitrary<Record<string, unknown>> {
  const params = fc.subarray(brief.environment.params).chain((ps) =>
    fc
      .tuple(
        ...ps.map((p) =>
          fc.oneof(
            fc.double({ min: p.min, max: p.max, noNaN: true }),
            fc
              .tuple(fc.double({ min: p.min, max: p.max, noNaN: true }), fc.double({ min: p.min, max: p.max, noNaN: true }))
              .map(([a, b]) => [Math.min(a, b), Math.max(a, b)]),
          ),
        ),
      )
      .map((vals) => Object.fromEntries(ps.map((p, i) => [p.name, vals[i]]))),
  );
  const vars = brief.rewardVariables.map((v) => v.name);
  const algorithm = fc.constantFrom(...brief.algorithms).chain((name) => algorithmArb(name));
  return fc.record({
    task: fc.constant(brief.id),
    environment: fc.record(
      { params, wrappers: fc.subarray([...brief.environment.wrappers]), numEnvs: fc.integer({ min: 1, max: 16 }) },
      { requiredKeys: ['params'] },
    ),
    reward: fc.record({ expression: fc.oneof(fc.constantFrom('r', 'r + 0.1 * (1 - abs(x) / 2.4)', 'done ? -1 : r'), expressionArb(vars, 3)) }),
    model: fc.record({ hidden: fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 3 }), activation: fc.constantFrom('tanh', 'relu') }),
    algorithm,
    budget: fc.record(
      {
        // At least one step of the largest vector of environments written above (16; 8 by default): a smaller budget is refused.
        envSteps: fc.integer({ min: 16, max: Math.min(brief.budget.maxEnvSteps, 20_000) }),
        targetReturn: fc.option(fc.double({ min: -1e6, max: 1e6, noNaN: true })),
      },
      { requiredKeys: ['envSteps'] },
    ),
    seed: fc.integer({ min: 0, max: 2_147_483_647 }),
  });
}

function algorithmArb(name: string): fc.Arbitrary<Record<string, unknown>> {
  const lr = fc.double({ min: 1e-5, max: 0.05, noNaN: true });
  const gamma = fc.double({ min: 0.8, max: 0.999, noNaN: true });
  switch (name) {
    case 'ppo':
      return fc.record({
        name: fc.constant('ppo'),
        learningRate: lr,
        gamma,
        gaeLambda: fc.double({ min: 0.5, max: 1, noNaN: true }),
        clip: fc.double({ min: 0.01, max: 1, noNaN: true }),
        epochs: fc.integer({ min: 1, max: 10 }),
        minibatches: fc.integer({ min: 1, max: 8 }),
        rolloutSteps: fc.integer({ min: 8, max: 256 }),
        entropyCoef: fc.double({ min: 0, max: 0.5, noNaN: true }),
      });
    case 'ars':
      return fc.integer({ min: 1, max: 32 }).chain((directions) =>
        fc.record({
          name: fc.constant('ars'),
          stepSize: fc.double({ min: 1e-4, max: 1, noNaN: true }),
          directions: fc.constant(directions),
          topDirections: fc.integer({ min: 1, max: directions }),
          noise: fc.double({ min: 1e-4, max: 1, noNaN: true }),
        }),
      );
    case 'dqn':
      return fc.double({ min: 0, max: 1, noNaN: true }).chain((final) =>
        fc.record({
          name: fc.constant('dqn'),
          learningRate: lr,
          gamma,
          bufferSize: fc.integer({ min: 100, max: 50_000 }),
          batchSize: fc.integer({ min: 8, max: 64 }),
          learningStarts: fc.integer({ min: 0, max: 1000 }),
          trainFrequency: fc.integer({ min: 1, max: 16 }),
          targetUpdateInterval: fc.integer({ min: 1, max: 1000 }),
          explorationFraction: fc.double({ min: 0.01, max: 1, noNaN: true }),
          explorationFinal: fc.constant(final),
        }),
      );
    case 'reinforce':
      return fc.record({
        name: fc.constant('reinforce'),
        learningRate: lr,
        gamma: fc.double({ min: 0.8, max: 1, noNaN: true }),
        episodesPerUpdate: fc.integer({ min: 1, max: 16 }),
      });
    default:
      return supervisedAlgorithmArb;
  }
}

const supervisedAlgorithmArb = fc.record({
  name: fc.constant('supervised'),
  optimizer: fc.constantFrom('sgd', 'adam', 'adamw'),
  learningRate: fc.double({ min: 1e-5, max: 0.5, noNaN: true }),
  batchSize: fc.integer({ min: 1, max: 256 }),
  epochs: fc.integer({ min: 1, max: 50 }),
  schedule: fc.constantFrom('constant', 'cosine', 'step'),
});

/** A valid supervised spec for a classification `brief` (iris-like), kept small. */
export function supervisedSpecArb(brief: TaskBrief): fc.Arbitrary<Record<string, unknown>> {
  const info = brief.supervised!;
  const vars = brief.rewardVariables.map((v) => v.name);
  const classify = info.target.type === 'classification';
  return fc.record({
    task: fc.constant(brief.id),
    environment: fc.record(
      { standardize: fc.boolean(), inputNoise: fc.double({ min: 0, max: 2, noNaN: true }), mixup: fc.double({ min: 0, max: 1, noNaN: true }) },
      { requiredKeys: [] },
    ),
    reward: fc.record({
      objective: classify ? fc.constantFrom('cross-entropy', 'focal') : fc.constantFrom('mse', 'huber'),
      labelSmoothing: fc.double({ min: 0, max: 0.5, noNaN: true }),
      weight: fc.option(fc.oneof(fc.constantFrom('1', 'label == 0 ? 2 : 1'), expressionArb(vars, 3))),
    }),
    dataset: fc.record({
      sources: fc
        .uniqueArray(fc.constantFrom(...info.sources.map((s) => s.id)), { minLength: 1, maxLength: 4 })
        .chain((ids) => fc.tuple(...ids.map(() => fc.double({ min: 0.01, max: 1, noNaN: true }))).map((ws) => ids.map((id, i) => ({ id, weight: ws[i] })))),
      size: fc.option(fc.integer({ min: 10, max: 5000 })),
      validationFraction: fc.double({ min: 0, max: 0.5, noNaN: true }),
    }),
    model: fc.record({
      hidden: fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 3 }),
      activation: fc.constantFrom('tanh', 'relu'),
      dropout: fc.double({ min: 0, max: 0.8, noNaN: true }),
    }),
    algorithm: supervisedAlgorithmArb,
    budget: fc.record({ examples: fc.integer({ min: 1, max: Math.min(brief.budget.maxExamples ?? 1, 20_000) }) }),
    seed: fc.integer({ min: 0, max: 2_147_483_647 }),
  });
}

/** How an almost-valid spec differs from a valid one. */
export type Mutation = 'wrong-type' | 'out-of-range' | 'unknown-key' | 'delete-key' | 'huge-string' | 'deep-nesting';

/** The paths of every value inside `v` (objects and arrays included), root excluded. */
function pathsOf(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [];
  if (v !== null && typeof v === 'object') {
    for (const [k, child] of Object.entries(v)) {
      const key = Array.isArray(v) ? Number(k) : k;
      out.push([...prefix, key], ...pathsOf(child, [...prefix, key]));
    }
  }
  return out;
}

/**
 * A valid spec with one field mutated: its kind, the path, and the mutated spec. Numbers
 * pushed out of range land at 1e9 or beyond, past every bound of the schema.
 */
export function almostValidArb(
  valid: fc.Arbitrary<Record<string, unknown>>,
): fc.Arbitrary<{ mutation: Mutation; path: (string | number)[]; spec: Record<string, unknown> }> {
  return valid.chain((spec) => {
    const paths = pathsOf(spec);
    const numeric = paths.filter((p) => typeof at(spec, p) === 'number');
    const objects: (string | number)[][] = [
      [],
      ...paths.filter((p) => {
        const x = at(spec, p);
        return x !== null && typeof x === 'object' && !Array.isArray(x);
      }),
    ];
    const kinds: Mutation[] = [
      'wrong-type',
      'unknown-key',
      'delete-key',
      'huge-string',
      'deep-nesting',
      ...(numeric.length ? (['out-of-range'] as const) : []),
    ];
    return fc.constantFrom(...kinds).chain((mutation) => {
      const pick = mutation === 'out-of-range' ? numeric : mutation === 'unknown-key' ? objects : paths;
      return fc
        .tuple(fc.constantFrom(...pick), fc.jsonValue({ maxDepth: 2 }), fc.integer({ min: 20, max: 8000 }), fc.string({ minLength: 1, maxLength: 12 }))
        .map(([path, junk, depth, key]) => {
          const copy = structuredClone(spec);
          const parentPath = path.slice(0, -1);
          const last = path.at(-1)!;
          const parent = (parentPath.length ? at(copy, parentPath) : copy) as Record<string | number, unknown>;
          switch (mutation) {
            case 'wrong-type': {
              const old = parent[last];
              parent[last] = typeof old === 'string' ? 42 : typeof old === 'number' ? 'forty-two' : typeof junk === typeof old ? 'x' : junk;
              break;
            }
            case 'out-of-range': {
              const old = parent[last] as number;
              parent[last] = Math.abs(old) * 1e9 + 1e9;
              break;
            }
            case 'unknown-key': {
              const target = (path.length ? at(copy, path) : copy) as Record<string, unknown>;
              target[`unknown_${key}`] = junk;
              break;
            }
            case 'delete-key':
              if (Array.isArray(parent)) parent.splice(last as number, 1);
              else delete parent[last];
              break;
            case 'huge-string':
              parent[last] = 'y'.repeat(70_000 + depth);
              break;
            case 'deep-nesting':
              parent[last] = deepValue(depth);
              break;
          }
          return { mutation, path, spec: copy };
        });
    });
  });
}

function at(root: unknown, path: readonly (string | number)[]): unknown {
  let cur = root;
  for (const k of path) cur = (cur as Record<string | number, unknown>)[k];
  return cur;
}

/**
 * What a learning agent reads of a brief, as one fixed-length vector. Built to carry across task
 * families: most of it is what the brief says *structurally* (kind, action space, variables and
 * their units, parameters and their ranges, budget, metric, target, catalogue) and a lexicon of
 * concepts its words name (a swing-up, a sparse reward, a deployment shift, noisy labels, …), which
 * mean the same in a family never seen. A small hashed bag of words keeps what the lexicon misses.
 */
import type { TaskBrief } from '../../spec/brief.js';
import { hashString } from '../../util/rng.js';

/** Size of the brief's feature vector. */
export const FEATURE_DIM = 128;

const ALGOS = ['ppo', 'ars', 'dqn', 'reinforce', 'supervised'];

/** Units a variable's description may state, in the order of their feature slots. */
const UNITS: [string, RegExp][] = [
  ['angle', /\brad\b(?!\/)|\bdegree|\bangle\b|\bcos\b|\bsin\b/],
  ['angular velocity', /rad\/s/],
  ['position', /\(m\)|\bposition\b|\bheight\b/],
  ['velocity', /m\/s|\bvelocity\b|\bspeed\b/],
];

/** Metrics in the words a brief's metric sentence uses, in the order of their feature slots. */
const METRICS: RegExp[] = [
  /\baccuracy\b/,
  /\bf1\b/,
  /log-loss|cross-entropy/,
  /root-mean-square|rmse/,
  /absolute error|mae/,
  /r²|r2|coefficient of determination/,
  /\breturn\b/,
];

/**
 * Concepts of the brief's words (title, description, action and metric words): each one a
 * feature that is 1 when any of its patterns occurs. What a task needs, not what it is called.
 */
export const CONCEPTS: [string, RegExp][] = [
  ['balance', /\bbalanc|\bupright\b|keep .* up/],
  ['swing-up', /\bswing/],
  ['reach a goal', /\breach|\bgoal\b|\bflag\b|\btarget height\b/],
  ['sparse reward', /\bsparse\b|-1 (for )?(every|each|per) step|−1 (for )?(every|each|per) step/],
  ['dense reward', /\b1 for every step\b|\bcost\b.*\bsquare|\bpenal/],
  ['continuous control', /\bcontinuous\b|\btorque in\b/],
  ['underpowered', /\bunderpowered\b|\bnot strong enough\b|\bbuild momentum\b|\bback and forth\b/],
  ['physics differ', /\bdiffer\b|\bphysics\b|\bheavier\b|\blonger\b|\bshorter\b/],
  ['deployment shift', /\bdeploy|\bnot known in advance\b|\bmay differ\b/],
  ['episode limit', /\bafter \d+ steps\b|\bhorizon\b|\btime limit\b/],
  ['classification', /\bclassif|\bwhich of\b|\bspecies\b|\bclass(es)?\b/],
  ['regression', /\bregress|\bpredict (the )?(numeric|value|amount)|\bhow (much|many)\b/],
  ['real data', /\brecorded\b|\bmeasured\b|\breal\b|\bdata set\b|\bdataset\b|\bsurvey\b/],
  ['synthetic data', /\bsynthetic\b|\bgenerated\b|\bpoints of the plane\b|\bgaussian\b/],
  ['noisy labels', /\bnois[ey]\b.*\blabel|\blabel.*\bnois|\bflipped\b|\bwrong label/],
  ['input noise', /\bnoise of\b|\bcoordinate noise\b|\bcarries gaussian noise\b|\bstandard deviation\b/],
  ['covariate shift', /\bshift(ed)?\b|\bonly from\b|\bpart of\b.*\bonly\b/],
  ['imbalance', /\bimbalanc|\brare\b|\bskew/],
  ['duplicates', /\bduplicat/],
  ['irrelevant features', /\birrelevant\b|\bdistractor|\bpure noise\b|\buninformative\b/],
  ['small data', /\bfew\b|\bsmall\b|\bscarce\b/],
  ['nonlinear boundary', /\bspiral|\bmoon|\bcheckerboard|\bring|\bcircle|\bshell|\bxor\b|\bparity\b/],
  ['lower is better', /lower is better/],
  ['missing values', /\bmissing\b/],
];

/** The slots of a real table's column facts (0 on a table without categorical columns or missing cells). */
export const TABLE_SLOTS = [72, 73, 74, 75] as const;

const TEXT_BUCKETS = 16;
const SOURCE_BUCKETS = 8;

/** log10(1 + x) / scale, the way sizes and caps enter (so a cap 10× larger moves the feature by 1/scale). */
const logScaled = (x: number, scale: number): number => Math.log10(1 + Math.max(0, x)) / scale;

/** Number of discrete actions the brief's action words (or its Gymnasium space) name; 0 for continuous. */
export function discreteActions(brief: TaskBrief): number {
  const g = brief.environment.gymnasium?.actionSpace;
  if (g) return g.type === 'discrete' ? g.n : 0;
  const words = brief.environment.actions;
  if (!words.startsWith('discrete')) return 0;
  const indices = [...words.matchAll(/(?:^discrete:|,|;)\s*(\d+)\s/g)].map((m) => Number(m[1]));
  return indices.length ? Math.max(...indices) + 1 : 2;
}

/** Writes an L2-normalised hashed bag of `words` into `f[at .. at + buckets)`, scaled by `weight`. */
function hashedBag(f: Float32Array, at: number, buckets: number, words: string[], weight: number): void {
  for (const w of words) f[at + (hashString(w) % buckets)] += 1;
  let n = 0;
  for (let i = at; i < at + buckets; i++) n += f[i] * f[i];
  n = Math.sqrt(n) || 1;
  for (let i = at; i < at + buckets; i++) f[i] = (f[i] / n) * weight;
}

/**
 * Features of a brief (length `FEATURE_DIM`):
 * - 0–15 kind, action space (discrete, continuous, count), sizes of the observation, parameters,
 *   reward variables and demonstrations, budget caps (env steps, examples, wall seconds), bias;
 * - 16–20 the algorithms allowed; 21–24 the units of the observed variables (shares);
 * - 25–31 the metric; 32–39 the supervised target and data (type, classes, features, catalogue size,
 *   sources); 40–45 the tunable parameters' ranges (how far they may move from their defaults);
 * - 48–71 the concept lexicon (`CONCEPTS`); 72–75 a real table's columns (`TABLE_SLOTS`: shares of
 *   categorical features and of features with missing cells, the mean missing share, the most levels);
 * - 96–111 hashed words of the text (weight ½), 112–119 hashed words of the catalogue (weight ½).
 */
export function briefFeatures(brief: TaskBrief): Float32Array {
  const f = new Float32Array(FEATURE_DIM);
  const env = brief.environment;
  const control = brief.kind === 'control';
  const nActions = control ? discreteActions(brief) : 0;
  f[0] = control ? 1 : 0;
  f[1] = control ? 0 : 1;
  f[2] = control && nActions > 0 ? 1 : 0;
  f[3] = control && nActions === 0 ? 1 : 0;
  f[4] = nActions / 5;
  f[5] = env.observation.length / 10;
  f[6] = env.params.length / 10;
  f[7] = brief.rewardVariables.length / 10;
  f[8] = brief.demonstrations.length / 5;
  f[9] = logScaled(brief.budget.maxEnvSteps, 7);
  f[10] = logScaled(brief.budget.maxExamples ?? 0, 8);
  f[11] = logScaled(brief.budget.maxWallSeconds, 4);
  f[12] = env.wrappers.includes('normalize-observation') ? 1 : 0;
  f[13] = brief.data === 'real' ? 1 : 0;
  f[14] = brief.data === 'synthetic' ? 1 : 0;
  f[15] = 1; // bias
  ALGOS.forEach((a, i) => (f[16 + i] = brief.algorithms.includes(a as never) ? 1 : 0));

  const vars = brief.kind === 'supervised' ? (brief.supervised?.features ?? []) : env.observation;
  if (vars.length) UNITS.forEach(([, re], i) => (f[21 + i] = vars.filter((v) => re.test(v.description.toLowerCase())).length / vars.length));

  const metric = brief.metric.toLowerCase();
  METRICS.forEach((re, i) => (f[25 + i] = re.test(metric) ? 1 : 0));

  const sup = brief.supervised;
  if (sup) {
    f[32] = sup.target.type === 'classification' ? 1 : 0;
    f[33] = sup.target.type === 'regression' ? 1 : 0;
    f[34] = logScaled(sup.target.classes?.length ?? 0, 1);
    f[35] = logScaled(sup.features.length, 1.5);
    const examples = sup.sources.reduce((a, s) => a + s.examples, 0);
    f[36] = logScaled(examples, 5);
    f[37] = sup.sources.length / 6;
    f[38] = logScaled(Math.max(0, ...sup.sources.map((s) => s.examples)), 5);
    f[39] = logScaled(Math.min(...sup.sources.map((s) => s.examples), examples), 5);
  }
  const columns = sup?.columns ?? [];
  if (columns.length) {
    const [categorical, withMissing, missingShare, levels] = TABLE_SLOTS;
    f[categorical] = columns.filter((c) => c.kind === 'categorical').length / columns.length;
    f[withMissing] = columns.filter((c) => c.missing > 0).length / columns.length;
    f[missingShare] = columns.reduce((a, c) => a + c.missing, 0) / columns.length;
    f[levels] = logScaled(Math.max(0, ...columns.map((c) => c.levels ?? 0)), 2);
  }
  if (env.params.length) {
    // How far the parameters may move from their defaults (relative span), and how many sit off their default range's middle.
    const spans = env.params.map((p) => (Math.abs(p.default) > 1e-12 ? (p.max - p.min) / Math.abs(p.default) : 1));
    f[40] = Math.min(2, spans.reduce((a, b) => a + b, 0) / spans.length) / 2;
    f[41] = Math.min(2, Math.max(...spans)) / 2;
    f[42] = env.params.filter((p) => p.default <= p.min || p.default >= p.max).length / env.params.length;
  }

  const text = `${brief.title} ${brief.description} ${env.actions} ${brief.metric}`.toLowerCase();
  CONCEPTS.forEach(([, re], i) => (f[48 + i] = re.test(text) ? 1 : 0));

  const words = text.match(/[a-z]+/g) ?? [];
  hashedBag(f, 96, TEXT_BUCKETS, words, 0.5);
  const catalog =
    [...(sup?.sources ?? []), ...brief.demonstrations]
      .map((s) => s.description)
      .join(' ')
      .toLowerCase()
      .match(/[a-z]+/g) ?? [];
  hashedBag(f, 112, SOURCE_BUCKETS, catalog, 0.5);
  return f;
}

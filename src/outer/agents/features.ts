import type { TaskBrief } from '../../spec/brief.js';

/** Size of the brief's feature vector. */
export const FEATURE_DIM = 96;
const TEXT_BUCKETS = 64;
const SOURCE_BUCKETS = 16;
const ALGOS = ['ppo', 'ars', 'dqn', 'reinforce', 'supervised'];

function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * Features of a brief: hashed word and bigram counts of its text (L2-normalised), structural
 * facts (kind, action type, number of variables and parameters, budget, algorithms allowed,
 * target type) and hashed words of its source and demonstration catalog.
 */
export function briefFeatures(brief: TaskBrief): Float32Array {
  const f = new Float32Array(FEATURE_DIM);
  const words = `${brief.title} ${brief.description} ${brief.metric}`.toLowerCase().match(/[a-z]+/g) ?? [];
  const grams = [...words, ...words.slice(1).map((w, i) => `${words[i]}_${w}`)];
  for (const g of grams) f[hash(g) % TEXT_BUCKETS] += 1;
  let n = 0;
  for (let i = 0; i < TEXT_BUCKETS; i++) n += f[i] * f[i];
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < TEXT_BUCKETS; i++) f[i] /= n;
  f[64] = brief.kind === 'control' ? 1 : 0;
  f[65] = brief.kind === 'supervised' ? 1 : 0;
  f[66] = brief.environment.actions.startsWith('discrete') ? 1 : 0;
  f[67] = brief.environment.observation.length / 10;
  f[68] = brief.environment.params.length / 10;
  f[69] = Math.log10(1 + brief.budget.maxEnvSteps) / 7;
  f[70] = brief.demonstrations.length / 5;
  f[71] = 1; // bias
  // What the algorithms allowed and the target are.
  ALGOS.forEach((a, i) => (f[72 + i] = brief.algorithms.includes(a as never) ? 1 : 0));
  f[77] = brief.supervised?.target.type === 'classification' ? 1 : 0;
  f[78] = brief.supervised?.target.type === 'regression' ? 1 : 0;
  f[79] = Math.log10(1 + (brief.budget.maxExamples ?? 0)) / 8;
  // The catalog: hashed words of the source and demonstration descriptions.
  const catalog = [...(brief.supervised?.sources ?? []), ...brief.demonstrations].map((s) => s.description).join(' ').toLowerCase().match(/[a-z]+/g) ?? [];
  for (const w of catalog) f[80 + (hash(w) % SOURCE_BUCKETS)] += 1;
  let m = 0;
  for (let i = 80; i < 96; i++) m += f[i] * f[i];
  m = Math.sqrt(m) || 1;
  for (let i = 80; i < 96; i++) f[i] /= m;
  return f;
}

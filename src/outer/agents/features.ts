import type { TaskBrief } from '../../spec/brief.js';

/** Size of the brief's feature vector. */
export const FEATURE_DIM = 72;
const TEXT_BUCKETS = 64;

function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * Features of a brief: hashed word and bigram counts of its text (L2-normalised) and a
 * few structural facts (kind, action type, number of variables and parameters, budget).
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
  f[69] = Math.log10(brief.budget.maxEnvSteps) / 7;
  f[70] = brief.demonstrations.length / 5;
  f[71] = 1; // bias
  return f;
}

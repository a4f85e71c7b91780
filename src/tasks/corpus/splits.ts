/**
 * The corpus's splits by domain: whole R packages go to train, validation or held-out, so that a
 * held-out task never shares a package (a field, a collector, a style of table) with a training
 * one. The assignment is the committed lists below; a package on neither list is a training
 * package. The lists name packages, not counts, so they do not drift when the build's rules change.
 * A held-out table that copies a training one is removed by the content fingerprint (`content.ts`).
 */

/** The corpus's splits. */
export type CorpusSplit = 'train' | 'validation' | 'held-out';

/** Every corpus split, in order. */
export const CORPUS_SPLITS: readonly CorpusSplit[] = ['train', 'validation', 'held-out'];

/** Packages held out: never in meta-training or tuning, only in the final evaluation of transfer. */
export const HELD_OUT_PACKAGES: readonly string[] = [
  'wooldridge',
  'carData',
  'survival',
  'HSAUR',
  'psych',
  'heplots',
  'ISLR',
  'plm',
  'lme4',
  'mstate',
  'sandwich',
  'palmerpenguins',
];

/** Packages for validation: model selection and tuning, never meta-training. */
export const VALIDATION_PACKAGES: readonly string[] = ['modeldata', 'robustbase', 'KMsurv', 'mlmRev', 'pscl', 'quantreg', 'geepack', 'betareg'];

/** The split of a package. */
export function packageSplit(pkg: string): CorpusSplit {
  if (HELD_OUT_PACKAGES.includes(pkg)) return 'held-out';
  if (VALIDATION_PACKAGES.includes(pkg)) return 'validation';
  return 'train';
}

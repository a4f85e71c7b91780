/**
 * The counts family (held out as a whole): real vega-datasets tables whose target is a count — US
 * census population by age group, unemployed workers by industry and month, US workers by
 * occupation (`inner/data/real-counts.ts`), none used by any other family. A count is a target
 * type no train family has: non-negative integers, skewed over orders of magnitude, zero in a
 * quarter of one table's rows, where squared and robust losses part ways. (Two more count tables
 * were tried and left out: GitHub commits per hour, which no feature predicts, and a week's felt
 * reports of earthquakes, 93% zeros, whose R² swings with where the few large counts fall.) Each
 * task draws its table, a subset of the other columns, a share of the rows, the metric (RMSE, MAE,
 * R²) and the standard catalog's corruption strengths (the drawing is shared with the other table
 * families: `../tables.ts`).
 */
import { loadJobs, loadPopulation, loadUnemployment } from '../../../inner/data/index.js';
import { type TableBase, type TableFamilyConfig, tableFamily } from '../tables.js';

/** The base tables (their own count target only: no numeric column is drawn as the target instead). */
export const COUNTS_BASES: TableBase[] = [
  { name: 'population', words: 'US census counts by age group and sex, 1850–2000', load: loadPopulation, numeric: [], keep: ['age'] },
  { name: 'unemployment', words: 'unemployed workers by industry and month, 2000–2010', load: loadUnemployment, numeric: [], keep: ['time'] },
  { name: 'jobs', words: 'US workers by occupation and sex, census years 1850–2000', load: loadJobs, numeric: [], keep: ['share'] },
];

/** The counts family's space. */
export const COUNTS_CONFIG: TableFamilyConfig = {
  name: 'counts',
  split: 'held-out',
  description:
    'held-out real vega-datasets tables with a count as the target (census population, unemployment by ' +
    'industry, workers by occupation) with drawn feature subset, row share, metric and source corruptions',
  bases: COUNTS_BASES,
  // Every target is a count (regression): the metric is drawn from RMSE, MAE and R².
  classificationMetrics: [],
  maxNoise: 0.45,
  minImbalance: 0.2,
  salt: 0xc0a7,
  rowSalt: 0xc0a,
  testFraction: 0.3,
};

/** The counts family (held out). */
export const countsFamily = tableFamily(COUNTS_CONFIG);

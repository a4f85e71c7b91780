/**
 * The data layer of supervised tasks: real datasets from installed packages, seeded synthetic
 * generators, and seeded corruptions. Nothing here fetches anything or knows about hidden splits.
 */
import { loadCars, loadIris, loadPenguins, loadSeattleWeather } from './real.js';
import type { Dataset } from './types.js';

/** The data layer's types. */
export type { Dataset, FeatureInfo } from './types.js';
/** The real datasets shipped in npm packages. */
export { loadPenguins, loadCars, loadSeattleWeather, loadIris, parseCsv, vegaDataPath } from './real.js';
/** The seeded 2-D generators. */
export { twoSpirals, moons, checkerboard } from './synthetic.js';
/** The seeded generators in more dimensions. */
export { gaussianBlobs, friedman, friedmanFunction, shells, signParity, FRIEDMAN_INPUTS } from './synthetic-nd.js';
/** The synthetic generators' options. */
export type { BlobOptions, FriedmanOptions, FriedmanVariant, ShellOptions, ParityOptions } from './synthetic-nd.js';
/** More real datasets. */
export { loadGapminder, loadMovies, loadTwoCityWeather, loadAirports } from './real-more.js';
/** Real tables whose target is a count. */
export { loadPopulation, loadUnemployment, loadJobs } from './real-counts.js';
/** The seeded corruptions and splits. */
export { subsample, labelNoise, covariateShift, imbalance, duplicate, jitterAugment, split, concat } from './corrupt.js';
/** Column statistics. */
export { featureInfo, classCounts, column, mean, std, quantile } from './stats.js';

/** Names of the real datasets `loadDataset` knows. */
export const REAL_DATASETS = ['penguins', 'cars', 'seattle-weather', 'iris'] as const;

/** One of `REAL_DATASETS`. */
export type RealDatasetName = (typeof REAL_DATASETS)[number];

const LOADERS: Record<RealDatasetName, () => Dataset> = {
  penguins: loadPenguins,
  cars: loadCars,
  'seattle-weather': loadSeattleWeather,
  iris: loadIris,
};

/** Loads a real dataset by name (a fresh copy of the cached table); throws a RangeError listing the known names otherwise. */
export function loadDataset(name: RealDatasetName): Dataset {
  const load = Object.hasOwn(LOADERS, name) ? LOADERS[name] : undefined;
  if (!load) throw new RangeError(`unknown dataset '${String(name)}' (known: ${REAL_DATASETS.join(', ')})`);
  return load();
}

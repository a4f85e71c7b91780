/**
 * The tabular family: real data sets from vega-datasets (cars, penguins, Seattle weather, iris)
 * with a drawn target (the data set's own or one of its numeric columns), a drawn subset of the
 * remaining features, a drawn share of the rows, and the standard source catalog with drawn
 * corruption strengths (label noise, shifted feature, class imbalance, clean-sample size).
 * The drawing is shared with the held-out `vega-more` family (`../tables.ts`).
 */
import { loadCars, loadIris, loadPenguins, loadSeattleWeather } from '../../../inner/data/index.js';
import { type TableBase, type TableFamilyConfig, tableFamily } from '../tables.js';

export { retarget, selectFeatures } from '../tables.js';

const BASES: TableBase[] = [
  { name: 'cars', load: loadCars, numeric: ['mpg', 'horsepower', 'weight', 'acceleration', 'displacement'] },
  { name: 'penguins', load: loadPenguins, numeric: ['body_mass', 'flipper_length', 'beak_length', 'beak_depth'] },
  { name: 'seattle-weather', load: loadSeattleWeather, numeric: ['temp_max', 'temp_min', 'wind'] },
  { name: 'iris', load: loadIris, numeric: ['petal_width', 'petal_length', 'sepal_length'] },
];

/** The tabular family's space. */
export const TABULAR_CONFIG: TableFamilyConfig = {
  name: 'tabular',
  split: 'train',
  description: 'real vega-datasets tables (cars, penguins, Seattle weather, iris) with drawn target, feature subset, row share, metric and source corruptions',
  bases: BASES,
  classificationMetrics: ['accuracy', 'macro-f1'],
  maxNoise: 0.5,
  minImbalance: 0.1,
  salt: 0x7ab1e,
  rowSalt: 0x7ab,
  testFraction: 0.3,
};

/** The tabular family. */
export const tabularFamily = tableFamily(TABULAR_CONFIG);

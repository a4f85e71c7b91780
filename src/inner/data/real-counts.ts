/**
 * Real tables whose target is a count (read from `vega-datasets` on disk, nothing fetched), for the
 * held-out `counts` task family: US census population by age group, unemployment by industry and
 * month, and US workers by occupation. Non-negative integers, skewed (the occupation counts are
 * zero in a quarter of the rows and reach eleven million). Like
 * `real.ts`, each loader cleans its table into numeric features with identifier names, caches it,
 * and hands out fresh deep copies.
 */
import { readFileSync } from 'node:fs';
import { cached, isNum, vegaDataPath } from './real.js';
import type { Dataset } from './types.js';

const readJson = (file: string): Record<string, unknown>[] => JSON.parse(readFileSync(vegaDataPath(file), 'utf8')) as Record<string, unknown>[];
const oneHot = (k: number, n: number): number[] => Array.from({ length: n }, (_, j) => (j === k ? 1 : 0));
const identifier = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[^a-z]+/g, '_')
    .replace(/_$/, '');

/**
 * US population (`population.json`, 570 rows: census years 1850–2000 every 10 years but 1890,
 * 19 five-year age groups, two sexes, none missing). Target `people`, the number counted;
 * features the census year, the age group's lower end and `female` (1 for women).
 */
export const loadPopulation = cached((): Dataset => {
  const x: number[][] = [];
  const y: number[] = [];
  for (const r of readJson('population.json')) {
    if (!isNum(r.year) || !isNum(r.age) || !isNum(r.people) || (r.sex !== 1 && r.sex !== 2)) continue;
    x.push([r.year, r.age, r.sex === 2 ? 1 : 0]);
    y.push(r.people);
  }
  return {
    name: 'population',
    features: ['year', 'age', 'female'],
    target: 'people',
    kind: 'regression',
    x,
    y,
    descriptions: {
      year: 'Census year (1850–2000, every 10 years; 1890 is missing).',
      age: 'Lower end of the five-year age group, in years (0, 5, …, 90; 90 stands for 90 and over).',
      female: '1 for the count of women, 0 for men.',
      people:
        'how many US residents of that sex and age group the census counted: ' +
        'a count, from about 5,000 to 11.6 million, skewed (half the rows under 2.6 million)',
    },
    summary: 'US census population by age group and sex, 1850–2000 (IPUMS via vega-datasets).',
  };
});

const INDUSTRIES = [
  'Government',
  'Mining and Extraction',
  'Construction',
  'Manufacturing',
  'Wholesale and Retail Trade',
  'Transportation and Utilities',
  'Information',
  'Finance',
  'Business services',
  'Education and Health',
  'Leisure and hospitality',
  'Other',
  'Agriculture',
  'Self-employed',
];

/**
 * Unemployment across industries (`unemployment-across-industries.json`, 1708 rows: 14 industries,
 * every month 2000–2010, none missing). Target `unemployed`, the number of unemployed workers
 * whose last job was in the industry, in thousands; features the time in years, the month on the
 * unit circle (`month_sin`, `month_cos`), the industry's unemployment rate that month and the
 * industry one-hot (`industry_*`).
 */
export const loadUnemployment = cached((): Dataset => {
  const x: number[][] = [];
  const y: number[] = [];
  for (const r of readJson('unemployment-across-industries.json')) {
    const k = INDUSTRIES.indexOf(String(r.series));
    if (k < 0 || !isNum(r.year) || !isNum(r.month) || !isNum(r.rate) || !isNum(r.count)) continue;
    const angle = (2 * Math.PI * (r.month - 1)) / 12;
    x.push([r.year + (r.month - 1) / 12, Math.sin(angle), Math.cos(angle), r.rate, ...oneHot(k, INDUSTRIES.length)]);
    y.push(r.count);
  }
  const industryNames = INDUSTRIES.map((s) => `industry_${identifier(s)}`);
  return {
    name: 'unemployment',
    features: ['time', 'month_sin', 'month_cos', 'rate', ...industryNames],
    target: 'unemployed',
    kind: 'regression',
    x,
    y,
    descriptions: {
      time: 'The month as a year with a fraction (2000.0 is January 2000, 2010.083 February 2010).',
      month_sin: 'sin(2π · (month − 1) / 12): the time of year, with month_cos.',
      month_cos: 'cos(2π · (month − 1) / 12): the time of year, with month_sin.',
      rate: "The industry's unemployment rate that month, in percent.",
      ...Object.fromEntries(industryNames.map((n, k) => [n, `1 if the row is about the industry ${INDUSTRIES[k]}, else 0.`])),
      unemployed:
        'how many unemployed workers last worked in the industry that month, in thousands: a count, from 2 to 2,440, skewed (half the rows under 450)',
    },
    summary: 'Unemployed workers by industry and month, 2000–2010 (US Bureau of Labor Statistics via vega-datasets).',
  };
});

/**
 * US workers by occupation (`jobs.json`, 7650 rows: 255 occupations × two sexes × 15 census years
 * 1850–2000, none missing). Target `workers`, the number in the occupation (zero in 2,066 rows);
 * features the census year, `female` (1 for women) and the occupation's share of all workers of
 * that sex and year (`share`, in percent). The occupation's name is dropped.
 */
export const loadJobs = cached((): Dataset => {
  const x: number[][] = [];
  const y: number[] = [];
  for (const r of readJson('jobs.json')) {
    if (!isNum(r.year) || !isNum(r.perc) || !isNum(r.count) || (r.sex !== 'men' && r.sex !== 'women')) continue;
    x.push([r.year, r.sex === 'women' ? 1 : 0, 100 * r.perc]);
    y.push(r.count);
  }
  return {
    name: 'jobs',
    features: ['year', 'female', 'share'],
    target: 'workers',
    kind: 'regression',
    x,
    y,
    descriptions: {
      year: 'Census year (1850–2000, every 10 years; 1890 is missing).',
      female: '1 for the count of women, 0 for men.',
      share: "The occupation's share of all US workers of that sex that year, in percent.",
      workers:
        'how many US workers of that sex held the occupation that year: ' +
        'a count, from 0 to 11.3 million, very skewed (zero in a quarter of the rows, under 3,600 in half)',
    },
    summary: 'US workers in 255 occupations by sex, census years 1850–2000 (IPUMS via vega-datasets), the occupation name dropped.',
  };
});

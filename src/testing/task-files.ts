/**
 * Test helpers for user task files: a fresh task directory with a small synthetic data set
 * (classification `kind` from two of three features, and a regression target `y`) written as
 * CSV, and task files written from partial objects.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csvFormat } from 'd3-dsv';

/** One row of the synthetic data: three features, a class and a number. */
export interface SyntheticRow {
  a: number;
  b: number;
  c: number;
  kind: string;
  y: number;
}

/** `n` deterministic rows: `kind` is up when a + b/2 > 0, `y` = 3a - 2b + c plus a little noise. */
export function syntheticRows(n: number, offset = 0): SyntheticRow[] {
  return Array.from({ length: n }, (_, k) => {
    const i = k + offset;
    const a = Number((2 * Math.sin(i * 1.7)).toFixed(6));
    const b = Number((1.5 * Math.cos(i * 0.9 + 0.3)).toFixed(6));
    const c = Number((((i * 37) % 11) / 10).toFixed(6));
    return { a, b, c, kind: a + b / 2 > 0 ? 'up' : 'down', y: Number((3 * a - 2 * b + c + 0.3 * Math.sin(i * 5.3)).toFixed(6)) };
  });
}

/** Rows as CSV text (header first). */
export function toCsv(rows: object[]): string {
  return `${csvFormat(rows)}\n`;
}

/** A fresh task directory holding `data.csv` (200 synthetic rows). */
export function taskDir(prefix = 'rrl-tasks-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'data.csv'), toCsv(syntheticRows(200)));
  return dir;
}

/** A valid classification task file's content on `data.csv`, with `patch` merged over its top level. */
export function classificationTask(id: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    title: 'Tell up from down',
    description: 'Classify a synthetic point as up or down from its three coordinates.',
    kind: 'supervised',
    variables: { a: 'first coordinate', b: 'second coordinate', c: 'a distractor', kind: 'up or down' },
    data: { file: 'data.csv', target: 'kind', type: 'classification', features: ['a', 'b', 'c'] },
    metric: 'accuracy',
    caps: { maxExamples: 4000, maxWallSeconds: 60 },
    baseline: { epochs: 10, examples: 2000, hidden: [16] },
    ...patch,
  };
}

/** Writes a task file (an object as JSON, or raw text) into `dir`; returns its path. */
export function writeTask(dir: string, name: string, task: Record<string, unknown> | string): string {
  const p = join(dir, name);
  writeFileSync(p, typeof task === 'string' ? task : JSON.stringify(task, null, 2));
  return p;
}

/**
 * `n` rows of a user's customer table: a categorical plan (header `Plan Type`), a region with empty
 * cells, a tenure with empty cells, a spend, and whether the customer left (`churned`, yes/no).
 */
export function customerRows(n: number, offset = 0): Record<string, string | number>[] {
  return Array.from({ length: n }, (_, k) => {
    const i = k + offset;
    const plan = ['basic', 'plus', 'pro'][(i * 5) % 3];
    const region = i % 13 === 0 ? '' : ['EU', 'US', 'APAC', 'LATAM'][(i * 3) % 4];
    const tenure = i % 11 === 0 ? '' : (i * 7) % 60;
    const spend = Number((20 + ((i * 37) % 90) + Math.sin(i)).toFixed(2));
    const risk = (plan === 'basic' ? 1 : 0) + (typeof tenure === 'number' && tenure < 12 ? 1 : 0) + (spend < 50 ? 0.5 : 0);
    return { 'Plan Type': plan, region, tenure, spend, churned: risk >= 1.5 ? 'yes' : 'no' };
  });
}

/** The task file of a customer table (`customerRows`) in `file`: classification of `churned` from its four columns. */
export function churnTask(file: string): Record<string, unknown> {
  return {
    id: 'own-churn',
    title: 'Which customers leave',
    description: 'Customers of a subscription service: their plan, region, tenure in months and monthly spend.',
    kind: 'supervised',
    data: { file, target: 'churned', type: 'classification', features: ['Plan Type', 'region', 'tenure', 'spend'], missing: 'keep' },
    metric: 'accuracy',
    caps: { maxExamples: 20_000, maxWallSeconds: 60 },
    baseline: { epochs: 10, examples: 3000, hidden: [8], learningRate: 0.01 },
  };
}

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

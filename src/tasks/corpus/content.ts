/**
 * Content fingerprints of tables, order independent and blind to row names: a table copies
 * another when its columns are the same multisets of values (numbers rounded to 4 significant
 * digits; an exact copy), or when at least two of its informative numeric columns — and at least
 * 60 % of the smaller table's — hold nearly the same set of values (MinHash Jaccard ≥ 0.8) as
 * columns of the other (a copy with rows dropped, a column added or renamed). A numeric column is
 * informative when it has at least 5 distinct values that are not a run of integers (a year, a
 * count, a row number match too much by chance). Built-in and family tables (penguins, Auto MPG,
 * iris, Seattle weather, the vega tables) are fingerprinted the same way from their datasets.
 */
import { createHash } from 'node:crypto';
import type { Dataset } from '../../spec/data.js';
import { mixSeed } from '../../util/rng.js';
import { present } from './profile.js';
import type { Cell } from './read.js';

/** MinHash values per column. */
const HASHES = 32;
/** Hashes per band of the index that finds candidate pairs (8 bands of 4). */
const BAND = 4;
/** Jaccard from which two columns hold the same values. */
export const SAME_COLUMN = 0.8;
/** Share of the smaller table's informative columns that must match. */
export const SAME_TABLE_SHARE = 0.6;

/** A table's content fingerprint. */
export interface ContentPrint {
  /** Who it is: `package::item`, or `built-in <name>`. */
  key: string;
  /** sha1 over the sorted hashes of every column's sorted values: equal for an exact copy. */
  exact: string;
  /** MinHash signatures of the informative numeric columns. */
  columns: Uint32Array[];
}

/** A number rounded to 4 significant digits. */
export function round4(v: number): number {
  if (v === 0 || !Number.isFinite(v)) return v;
  const f = 10 ** (3 - Math.floor(Math.log10(Math.abs(v))));
  return Math.round(v * f) / f;
}

/** The hash of a column's values as a multiset: numbers rounded and sorted as numbers, strings sorted. */
function columnHash(cells: Cell[]): string {
  const h = createHash('sha1');
  if (cells.every((c) => typeof c === 'number')) {
    const v = Float64Array.from(cells as number[], round4).sort();
    h.update(new Uint8Array(v.buffer));
  } else
    h.update(
      cells
        .map((c) => String(c).trim().toLowerCase())
        .sort()
        .join('\u0001'),
    );
  return h.digest('hex');
}

/** Whether a numeric column's distinct values say something: at least 5 and not a run of integers. */
function informative(values: number[]): boolean {
  if (values.length < 5) return false;
  if (!values.every(Number.isInteger)) return true;
  const min = Math.min(...values);
  const max = Math.max(...values);
  return max - min + 1 > 2 * values.length;
}

const BITS = new Float64Array(1);
const WORDS = new Uint32Array(BITS.buffer);

/** The MinHash signature of a set of numbers. */
function minhash(values: Iterable<number>): Uint32Array {
  const sig = new Uint32Array(HASHES).fill(0xffffffff);
  for (const v of values) {
    BITS[0] = v;
    const h = mixSeed(WORDS[0], WORDS[1]);
    for (let k = 0; k < HASHES; k++) {
      const m = mixSeed(h, k) >>> 0;
      if (m < sig[k]) sig[k] = m;
    }
  }
  return sig;
}

/** The fingerprint of a table given as named columns of cells (`rownames` ignored). */
export function contentPrint(key: string, columns: { name: string; cells: Cell[] }[]): ContentPrint {
  const hashes: string[] = [];
  const sigs: Uint32Array[] = [];
  for (const col of columns) {
    if (col.name === 'rownames') continue;
    const cells = col.cells.filter(present);
    hashes.push(columnHash(cells));
    if (cells.length && cells.every((c) => typeof c === 'number')) {
      const distinct = [...new Set(cells as number[])];
      if (informative(distinct)) sigs.push(minhash(new Set(distinct.map(round4))));
    }
  }
  return { key, exact: createHash('sha1').update(hashes.sort().join(',')).digest('hex'), columns: sigs };
}

/** The fingerprint of a built-in or family dataset: its numeric features and a numeric target. */
export function datasetPrint(key: string, d: Dataset): ContentPrint {
  const columns = d.features
    .filter((_, j) => d.columns?.[j]?.kind !== 'categorical')
    .map((name) => ({ name, cells: d.x.map((r) => r[d.features.indexOf(name)]) }));
  if (d.kind === 'regression') columns.push({ name: d.target, cells: d.y });
  return contentPrint(key, columns);
}

const jaccard = (a: Uint32Array, b: Uint32Array): number => a.reduce((k, v, i) => k + (v === b[i] ? 1 : 0), 0) / HASHES;

/** Whether one of two tables copies the other (exactly, or column by column as the module's rule says). */
export function copies(a: ContentPrint, b: ContentPrint): boolean {
  if (a.exact === b.exact) return true;
  const small = a.columns.length <= b.columns.length ? a : b;
  const large = small === a ? b : a;
  const need = Math.max(2, Math.ceil(SAME_TABLE_SHARE * small.columns.length));
  if (small.columns.length < need) return false;
  const used = new Set<number>();
  let matched = 0;
  for (const s of small.columns) {
    const k = large.columns.findIndex((l, i) => !used.has(i) && jaccard(s, l) >= SAME_COLUMN);
    if (k >= 0) {
      used.add(k);
      matched++;
    }
  }
  return matched >= need;
}

/**
 * The tables to keep: `prints` in order of preference, each kept unless it copies a kept one (or a
 * built-in in `reference`); returns, per dropped table, the key of the table it copies. A band
 * index over the MinHash signatures finds the candidates, so a corpus is not compared pair by pair.
 */
export function dedupe(prints: ContentPrint[], reference: ContentPrint[] = []): Map<string, string> {
  const dropped = new Map<string, string>();
  const kept: ContentPrint[] = [];
  const exact = new Map<string, string>();
  const bands = new Map<string, Set<number>>();
  const keep = (p: ContentPrint): void => {
    const at = kept.push(p) - 1;
    if (!exact.has(p.exact)) exact.set(p.exact, p.key);
    for (const sig of p.columns) {
      for (let b = 0; b < HASHES; b += BAND) {
        const band = `${b}:${sig.slice(b, b + BAND).join(',')}`;
        let s = bands.get(band);
        if (!s) bands.set(band, (s = new Set()));
        s.add(at);
      }
    }
  };
  for (const r of reference) keep(r);
  for (const p of prints) {
    const same = exact.get(p.exact);
    if (same) {
      dropped.set(p.key, same);
      continue;
    }
    const candidates = new Set<number>();
    for (const sig of p.columns)
      for (let b = 0; b < HASHES; b += BAND) for (const k of bands.get(`${b}:${sig.slice(b, b + BAND).join(',')}`) ?? []) candidates.add(k);
    const copied = [...candidates].sort((x, y) => x - y).find((k) => copies(p, kept[k]));
    if (copied !== undefined) dropped.set(p.key, kept[copied].key);
    else keep(p);
  }
  return dropped;
}

/**
 * Reads the corpus: its manifest (the reserved tables refused before anything else) and one
 * table's Parquet file as raw columns, and its documentation's text. Cells stay as they come:
 * numbers, strings (levels of factors and booleans written as strings), null where missing.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parquetMetadata, parquetRead, parquetSchema } from 'hyparquet';
import { MAX_DATA_BYTES, checkShape } from '../file/table.js';
import { CorpusError, isReserved, refuseReserved, requireCorpus } from './where.js';

/** The kinds the builder gives each column. */
export type ColumnKind = 'numeric' | 'boolean' | 'categorical' | 'text' | 'datetime';

/** One table of the manifest. */
export interface ManifestEntry {
  package: string;
  item: string;
  title: string;
  rows: number;
  columns: number;
  column_kinds: Record<string, ColumnKind>;
  sha256: string;
}

/** The manifest's tables, the reserved ones left out (and counted). */
export interface Manifest {
  dir: string;
  tables: ManifestEntry[];
  /** Entries refused because they are reserved (a manifest built with `--packages` naming one). */
  reserved: number;
}

/** A cell as read: a number, a string, or null where it is missing. */
export type Cell = number | string | null;

/** One column as read. */
export interface RawColumn {
  name: string;
  kind: ColumnKind;
  cells: Cell[];
}

/** One table as read: its columns in file order. */
export interface RawTable {
  package: string;
  item: string;
  rows: number;
  columns: RawColumn[];
}

/** Reads `dir/manifest.json`; reserved entries never come back. */
export function readManifest(dir: string): Manifest {
  requireCorpus(dir);
  let raw: { tables?: ManifestEntry[] };
  try {
    raw = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { tables?: ManifestEntry[] };
  } catch (err) {
    throw new CorpusError(`cannot read ${join(dir, 'manifest.json')} (${(err as Error).message.split('\n')[0]}); rebuild it with python/fetch-corpus.sh`);
  }
  const all = Array.isArray(raw.tables) ? raw.tables : [];
  const tables = all.filter((t) => !isReserved(t.package, t.item));
  return { dir, tables, reserved: all.length - tables.length };
}

/** A cell as this module keeps it. */
function cellOf(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.getTime();
  return String(v);
}

/**
 * Reads one table of the corpus column by column (refused, unread, when it is reserved), within the
 * limits of a task file's data (`file/table.ts`), checked from the footer before any page is read.
 */
export async function readCorpusTable(dir: string, entry: ManifestEntry): Promise<RawTable> {
  refuseReserved(entry.package, entry.item);
  const path = join(dir, 'tables', entry.package, `${entry.item}.parquet`);
  const name = `${entry.package}/${entry.item}.parquet`;
  if (statSync(path).size > MAX_DATA_BYTES) throw new CorpusError(`${name}: over the ${MAX_DATA_BYTES}-byte limit of a data file`);
  const bytes = readFileSync(path);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const metadata = parquetMetadata(file);
  const names = parquetSchema(metadata).children.map((c) => c.element.name);
  const rows = Number(metadata.num_rows);
  checkShape(name, rows, names.length);
  const cells = new Map<string, Cell[]>(names.map((n) => [n, new Array<Cell>(rows).fill(null)]));
  await parquetRead({
    file,
    metadata,
    onChunk: (chunk) => {
      const out = cells.get(chunk.columnName);
      if (!out) return;
      const data = chunk.columnData as ArrayLike<unknown>;
      for (let i = 0; i < data.length && chunk.rowStart + i < rows; i++) out[chunk.rowStart + i] = cellOf(data[i]);
    },
  });
  const columns = names.map((n) => ({ name: n, kind: entry.column_kinds[n] ?? 'numeric', cells: cells.get(n)! }));
  return { package: entry.package, item: entry.item, rows, columns };
}

/** The table's documentation text (refused when it is reserved); empty when the file is missing. */
export function readCorpusDoc(dir: string, entry: { package: string; item: string }): string {
  refuseReserved(entry.package, entry.item);
  try {
    return readFileSync(join(dir, 'docs', entry.package, `${entry.item}.md`), 'utf8');
  } catch {
    return '';
  }
}

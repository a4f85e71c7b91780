/**
 * Reads a user's data file into a table of named columns: CSV (d3-dsv), JSON Lines (one
 * `JSON.parse` per line) and Parquet (hyparquet). Each file is checked before it is read: a
 * regular file, at most `MAX_DATA_BYTES`; a table past `MAX_ROWS` rows or `MAX_COLUMNS`
 * columns is refused. Every problem is an error with one line that names the file.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { csvParseRows } from 'd3-dsv';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';

/** Largest data file read (bytes): 64 MiB. */
export const MAX_DATA_BYTES = 64 * 1024 * 1024;
/** Most rows of a table. */
export const MAX_ROWS = 1_000_000;
/** Most columns of a table. */
export const MAX_COLUMNS = 2000;

/** The formats of data files. */
export type TableFormat = 'csv' | 'jsonl' | 'parquet';

/** A table: column names in file order and one record per row (cells as the format gives them). */
export interface Table {
  columns: string[];
  rows: Record<string, unknown>[];
}

/** The format a file name implies, or null. */
export function formatOf(file: string): TableFormat | null {
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  if (ext === '.parquet') return 'parquet';
  return null;
}

/** A one-line error about a data file. */
export class TableError extends Error {}

/** Reads a data file (already resolved and checked to be inside the task directory). */
export async function readTable(path: string, format: TableFormat | null = formatOf(path)): Promise<Table> {
  const name = basename(path);
  if (!format) throw new TableError(`${name}: unknown format (use .csv, .jsonl or .parquet, or set "format")`);
  const info = await stat(path);
  if (!info.isFile()) throw new TableError(`${name}: not a regular file`);
  if (info.size > MAX_DATA_BYTES) throw new TableError(`${name}: ${info.size} bytes is over the limit of a data file (${MAX_DATA_BYTES / 2 ** 20} MiB)`);
  if (info.size === 0) throw new TableError(`${name}: the file is empty`);
  const bytes = await readFile(path);
  const table = format === 'csv' ? csvTable(bytes.toString('utf8'), name) : format === 'jsonl' ? jsonlTable(bytes.toString('utf8'), name) : await parquetTable(bytes, name);
  if (table.rows.length > MAX_ROWS) throw new TableError(`${name}: ${table.rows.length} rows is over the limit of ${MAX_ROWS}`);
  if (table.columns.length > MAX_COLUMNS) throw new TableError(`${name}: ${table.columns.length} columns is over the limit of ${MAX_COLUMNS}`);
  return table;
}

function csvTable(text: string, name: string): Table {
  const rows = csvParseRows(text.replace(/^\uFEFF/, ''));
  const header = rows[0]?.map((h) => h.trim()) ?? [];
  if (header.length === 0 || header.every((h) => h === '')) throw new TableError(`${name}: no header row`);
  checkHeader(header, name);
  const out: Record<string, unknown>[] = [];
  for (let r = 1; r < rows.length; r++) {
    const cells = rows[r];
    if (cells.length === 1 && cells[0].trim() === '') continue; // a blank line
    if (cells.length !== header.length) throw new TableError(`${name}: line ${r + 1} has ${cells.length} cells, the header has ${header.length}`);
    const rec: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    header.forEach((h, j) => (rec[h] = cells[j]));
    out.push(rec);
  }
  return { columns: header, rows: out };
}

function jsonlTable(text: string, name: string): Table {
  const columns: string[] = [];
  const seen = new Set<string>();
  const rows: Record<string, unknown>[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new TableError(`${name}: line ${i + 1} is not JSON (${(err as Error).message})`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new TableError(`${name}: line ${i + 1} is not a JSON object`);
    const rec: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(value)) {
      rec[k] = v;
      if (!seen.has(k)) {
        seen.add(k);
        columns.push(k);
      }
    }
    rows.push(rec);
  }
  return { columns, rows };
}

async function parquetTable(bytes: Buffer, name: string): Promise<Table> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  try {
    const metadata = parquetMetadata(file);
    const columns = parquetSchema(metadata).children.map((c) => c.element.name);
    checkHeader(columns, name);
    if (Number(metadata.num_rows) > MAX_ROWS) throw new TableError(`${name}: ${metadata.num_rows} rows is over the limit of ${MAX_ROWS}`);
    const rows = (await parquetReadObjects({ file, metadata })) as Record<string, unknown>[];
    for (const row of rows) for (const k of columns) if (typeof row[k] === 'bigint') row[k] = Number(row[k]);
    return { columns, rows };
  } catch (err) {
    if (err instanceof TableError) throw err;
    throw new TableError(`${name}: not a readable Parquet file (${(err as Error).message.split('\n')[0]})`);
  }
}

function checkHeader(columns: string[], name: string): void {
  const seen = new Set<string>();
  for (const c of columns) {
    if (c === '') throw new TableError(`${name}: a column has an empty name`);
    if (seen.has(c)) throw new TableError(`${name}: the column name "${c}" appears twice`);
    seen.add(c);
  }
}

/**
 * Reads a user's data file into a table of named columns: CSV (d3-dsv), JSON Lines (one
 * `JSON.parse` per line) and Parquet (hyparquet). Each file is checked before it is read: a
 * regular file, at most `MAX_DATA_BYTES`. Its shape is checked before its cells are decoded: a
 * table past `MAX_ROWS` rows, `MAX_COLUMNS` columns or `MAX_CELLS` cells (rows × columns) is
 * refused from the Parquet footer, from a scan of the CSV's records that allocates nothing, and
 * line by line for JSON Lines. Every problem is an error with one line that names the file.
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
/**
 * Most cells (rows × columns) of a table: a million rows of ten columns. Decoded tables take
 * about 60–100 bytes a cell, so this keeps a read under about 1 GB whatever the file's bytes
 * (a 24 KB Parquet file can declare 64 million cells).
 */
export const MAX_CELLS = 10_000_000;

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
  const table =
    format === 'csv' ? csvTable(bytes.toString('utf8'), name) : format === 'jsonl' ? jsonlTable(bytes.toString('utf8'), name) : await parquetTable(bytes, name);
  checkShape(name, table.rows.length, table.columns.length);
  return table;
}

/**
 * Refuses a table of more than `MAX_ROWS` rows, `MAX_COLUMNS` columns or `MAX_CELLS` cells;
 * `cells` defaults to rows × columns (a ragged CSV may hold more).
 */
export function checkShape(name: string, rows: number, columns: number, cells = rows * columns, what = 'rows'): void {
  if (rows > MAX_ROWS) throw new TableError(`${name}: ${rows} ${what} is over the limit of ${MAX_ROWS}`);
  if (columns > MAX_COLUMNS) throw new TableError(`${name}: ${columns} columns is over the limit of ${MAX_COLUMNS}`);
  if (cells > MAX_CELLS) {
    throw new TableError(
      `${name}: ${rows} ${what} × ${columns} columns = ${cells} cells is over the ` +
        `limit of ${MAX_CELLS} cells; keep only the columns the task uses, or fewer rows`,
    );
  }
}

function csvTable(text: string, name: string): Table {
  const body = text.replace(/^\uFEFF/, '');
  const shape = csvShape(body);
  // The header is a record too; a blank line counts as a row of one cell here (and is skipped below).
  checkShape(name, Math.max(0, shape.records - 1), shape.headerCells, Math.max((shape.records - 1) * shape.headerCells, shape.cells - shape.headerCells));
  let header: string[] = [];
  const out: Record<string, unknown>[] = [];
  csvParseRows(body, (cells, r) => {
    if (r === 0) {
      header = cells.map((h) => h.trim());
      if (header.length === 0 || header.every((h) => h === '')) throw new TableError(`${name}: no header row`);
      checkHeader(header, name);
      return null;
    }
    if (cells.length === 1 && cells[0].trim() === '') return null; // a blank line
    if (cells.length !== header.length) throw new TableError(`${name}: line ${r + 1} has ${cells.length} cells, the header has ${header.length}`);
    const rec: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    header.forEach((h, j) => (rec[h] = cells[j]));
    out.push(rec);
    return null; // the records are kept here, not by the parser
  });
  if (header.length === 0) throw new TableError(`${name}: no header row`);
  return { columns: header, rows: out };
}

const QUOTE = 34;
const NEWLINE = 10;
const RETURN = 13;
const COMMA = 44;

/**
 * The shape of a CSV text without allocating its cells: records, the cells of the first record
 * and the cells of all records. A cell that starts with a quote runs to its closing quote (`""`
 * inside is a quote), and the character after the closing quote ends the cell; records end at
 * \n, \r\n or \r outside quotes; one trailing line break ends the text.
 */
export function csvShape(text: string): { records: number; headerCells: number; cells: number } {
  let n = text.length;
  if (text.charCodeAt(n - 1) === NEWLINE) n--;
  if (text.charCodeAt(n - 1) === RETURN) n--;
  let records = 0;
  let cells = 0;
  let headerCells = 0;
  let inRecord = 0; // cells of the current record
  const endRecord = (): void => {
    if (records === 0) headerCells = inRecord;
    records++;
    cells += inRecord;
    inRecord = 0;
  };
  if (text.length === 0) return { records, headerCells, cells };
  let i = 0; // (a text of one line break is one record of one empty cell, as d3-dsv reads it)
  for (;;) {
    // A cell starts at i; it ends at a comma (another cell follows), a line break or the end.
    inRecord++;
    let end: 'comma' | 'line' | 'text' = 'text';
    if (text.charCodeAt(i) === QUOTE) {
      i++;
      for (;;) {
        while (i < n && text.charCodeAt(i) !== QUOTE) i++;
        if (i >= n) break; // an unclosed quote runs to the end
        i++;
        if (text.charCodeAt(i) !== QUOTE) break;
        i++; // "" is a quote inside the cell
      }
      if (i < n) {
        const c = text.charCodeAt(i++);
        end = c === NEWLINE || c === RETURN ? 'line' : 'comma'; // whatever follows the closing quote ends the cell
        if (c === RETURN && text.charCodeAt(i) === NEWLINE) i++;
      }
    } else {
      while (i < n) {
        const c = text.charCodeAt(i++);
        if (c === COMMA) end = 'comma';
        else if (c === NEWLINE || c === RETURN) {
          end = 'line';
          if (c === RETURN && text.charCodeAt(i) === NEWLINE) i++;
        } else continue;
        break;
      }
    }
    if (end === 'line') endRecord();
    if (end === 'text') {
      endRecord();
      return { records, headerCells, cells };
    }
  }
}

function jsonlTable(text: string, name: string): Table {
  const columns: string[] = [];
  const seen = new Set<string>();
  const rows: Record<string, unknown>[] = [];
  const lines = text.split(/\r?\n/);
  const total = lines.reduce((k, l) => (l.trim() === '' ? k : k + 1), 0);
  let cells = 0;
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
    cells += Object.keys(rec).length;
    // The first object's width times the lines is what the file would hold if every line were like it.
    if (rows.length === 0) checkShape(name, total, columns.length);
    if (cells > MAX_CELLS || columns.length > MAX_COLUMNS) checkShape(name, total, columns.length, Math.max(cells, total * columns.length));
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
    // What the footer declares, before any page is read: the file's rows and each row group's (the reader reads every group).
    const grouped = metadata.row_groups.reduce((k, g) => k + Number(g.num_rows), 0);
    const leaves = metadata.schema.filter((e) => !e.num_children).length;
    checkShape(name, Math.max(Number(metadata.num_rows), grouped), Math.max(columns.length, leaves));
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

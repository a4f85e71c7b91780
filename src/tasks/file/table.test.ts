import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { csvParseRows } from 'd3-dsv';
import { parquetMetadata } from 'hyparquet';
import { ByteWriter, parquetWriteBuffer } from 'hyparquet-writer';
import { writeMetadata } from 'hyparquet-writer/src/metadata.js';
import { MAX_CELLS, MAX_COLUMNS, MAX_DATA_BYTES, TableError, csvShape, formatOf, readTable } from './table.js';

const dir = mkdtempSync(join(tmpdir(), 'rrl-table-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Uint8Array): string => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

test('CSV: quoted fields with commas, quotes and line breaks, a BOM, CRLF endings and a trailing blank line', async () => {
  const p = file('q.csv', '\uFEFFname,"x, y",note\r\n"Smith, J.",1.5,"said ""hi""\nthen left"\r\nDoe,2,\r\n\r\n');
  const t = await readTable(p);
  assert.deepEqual(t.columns, ['name', 'x, y', 'note']);
  assert.equal(t.rows.length, 2);
  assert.equal(t.rows[0].name, 'Smith, J.');
  assert.equal(t.rows[0]['x, y'], '1.5');
  assert.equal(t.rows[0].note, 'said "hi"\nthen left');
  assert.equal(t.rows[1].note, '');
});

test('CSV: a ragged line, a repeated column name and a missing header are one-line errors', async () => {
  await assert.rejects(
    readTable(file('ragged.csv', 'a,b\n1,2\n3\n')),
    (e: Error) => e instanceof TableError && /ragged\.csv: line 3 has 1 cells, the header has 2/.test(e.message),
  );
  await assert.rejects(readTable(file('dup.csv', 'a,b,a\n1,2,3\n')), /the column name "a" appears twice/);
  await assert.rejects(readTable(file('nohead.csv', ',\n1,2\n')), /no header row/);
});

test('JSON Lines: objects per line, columns in first-seen order, a bad line named', async () => {
  const t = await readTable(file('d.jsonl', '{"a":1,"b":"x"}\n\n{"b":"y","c":true}\n'));
  assert.deepEqual(t.columns, ['a', 'b', 'c']);
  assert.deepEqual([t.rows[0].a, t.rows[1].b, t.rows[1].c, t.rows[1].a], [1, 'y', true, undefined]);
  await assert.rejects(readTable(file('bad.jsonl', '{"a":1}\n{"a":\n')), /bad\.jsonl: line 2 is not JSON/);
  await assert.rejects(readTable(file('arr.jsonl', '[1,2]\n')), /line 1 is not a JSON object/);
});

test('Parquet: columns and rows as written by hyparquet-writer (64-bit integers as numbers)', async () => {
  const buf = parquetWriteBuffer({
    columnData: [
      { name: 'x', data: [1.5, 2.5, 3.5], type: 'DOUBLE' },
      { name: 'n', data: [1n, 2n, 3n], type: 'INT64' },
      { name: 'label', data: ['a', 'b', 'a'], type: 'STRING' },
    ],
  });
  const t = await readTable(file('d.parquet', new Uint8Array(buf)));
  assert.deepEqual(t.columns, ['x', 'n', 'label']);
  assert.deepEqual(
    t.rows.map((r) => [r.x, r.n, r.label]),
    [
      [1.5, 1, 'a'],
      [2.5, 2, 'b'],
      [3.5, 3, 'a'],
    ],
  );
  await assert.rejects(readTable(file('junk.parquet', 'not parquet at all')), /junk\.parquet: not a readable Parquet file/);
});

test('a file over the size cap is refused before it is read; an empty one and an unknown format too', async () => {
  const big = file('big.csv', 'a\n');
  truncateSync(big, MAX_DATA_BYTES + 1); // sparse: nothing is written
  await assert.rejects(readTable(big), /big\.csv: 67108865 bytes is over the limit of a data file \(64 MiB\)/);
  await assert.rejects(readTable(file('empty.csv', '')), /empty\.csv: the file is empty/);
  await assert.rejects(readTable(file('d.xlsx', 'x')), /unknown format/);
  assert.equal(formatOf('a/b.NDJSON'), 'jsonl');
});

/**
 * A Parquet file of `columns` constant columns whose footer declares `rows` rows while its pages
 * hold 16 and are zeroed: reading any page fails, so a refusal that names the cells was made
 * from the footer alone.
 */
function declaredParquet(rows: number, columns: number): Uint8Array {
  const small = parquetWriteBuffer({
    columnData: Array.from({ length: columns }, (_, j) => ({ name: `c${j}`, data: new Int32Array(16), type: 'INT32' as const })),
  });
  const meta = parquetMetadata(small);
  meta.num_rows = BigInt(rows);
  meta.row_groups[0].num_rows = BigInt(rows);
  const footerLength = new DataView(small).getUint32(small.byteLength - 8, true);
  const body = new Uint8Array(small.slice(0, small.byteLength - 8 - footerLength));
  body.fill(0, 4); // keep the leading magic, zero every page
  const w = new ByteWriter();
  writeMetadata(w, meta as Parameters<typeof writeMetadata>[1]); // the writer bundles its own hyparquet's types
  const footer = new Uint8Array(w.buffer, 0, w.offset);
  const out = new Uint8Array(body.length + footer.length + 8);
  out.set(body);
  out.set(footer, body.length);
  new DataView(out.buffer).setUint32(body.length + footer.length, footer.length, true);
  out.set(new TextEncoder().encode('PAR1'), body.length + footer.length + 4);
  return out;
}

test('Parquet: rows × columns over the cell limit is refused from the footer, before a page is decoded', async () => {
  const bytes = declaredParquet(1_000_000, 64);
  assert.ok(bytes.length < 24 * 1024, `${bytes.length} bytes`);
  const p = file('declared.parquet', bytes);
  await assert.rejects(readTable(p), (e: Error) => {
    assert.ok(e instanceof TableError && !e.message.includes('\n'), e.message);
    assert.equal(
      e.message,
      `declared.parquet: 1000000 rows × 64 columns = 64000000 cells is over the limit of ${MAX_CELLS} cells; keep only the columns the task uses, or fewer rows`,
    );
    return true;
  });
  // The same file under the limit reaches the pages, which fail: the refusal above came first.
  await assert.rejects(readTable(file('declared-small.parquet', declaredParquet(1000, 64))), /declared-small\.parquet: not a readable Parquet file/);
});

test('CSV: a wide or long table is refused from a scan of its records before it is parsed', async () => {
  const wide = file('wide.csv', `${Array.from({ length: MAX_COLUMNS + 1 }, (_, j) => `c${j}`).join(',')}\n`);
  await assert.rejects(readTable(wide), new RegExp(`wide\\.csv: ${MAX_COLUMNS + 1} columns is over the limit of ${MAX_COLUMNS}$`));
  // 5,001 rows of 2,000 one-character cells: 10,002,000 cells, 20 MB.
  const row = `${'0,'.repeat(1999)}0\n`;
  const long = file('long.csv', `${Array.from({ length: 2000 }, (_, j) => `c${j}`).join(',')}\n${row.repeat(5001)}`);
  await assert.rejects(readTable(long), (e: Error) => {
    assert.equal(
      e.message,
      `long.csv: 5001 rows × 2000 columns = 10002000 cells is over the limit of ${MAX_CELLS} cells; keep only the columns the task uses, or fewer rows`,
    );
    return true;
  });
});

test("JSON Lines: lines × the first object's keys over the cell limit is refused at the first line; a wider later line too", async () => {
  const wideLine = JSON.stringify(Object.fromEntries(Array.from({ length: 1000 }, (_, j) => [`k${j}`, 0])));
  await assert.rejects(
    readTable(file('first.jsonl', `${wideLine}\n${'{}\n'.repeat(10_000)}`)),
    /first\.jsonl: 10001 rows × 1000 columns = 10001000 cells is over the limit of 10000000 cells; keep only/,
  );
  await assert.rejects(
    readTable(file('later.jsonl', `{"k0":1}\n${wideLine}\n${'{}\n'.repeat(9999)}`)),
    /later\.jsonl: 10001 rows × 1000 columns = 10001000 cells is over the limit/,
  );
});

test('csvShape counts the records and cells d3-dsv parses, for any text (property, 2,000 texts)', () => {
  const char = fc.constantFrom('a', 'b', ',', '"', '\n', '\r', ' ');
  fc.assert(
    fc.property(fc.array(char, { maxLength: 40 }), (chars) => {
      const text = chars.join('');
      const rows = csvParseRows(text);
      const shape = csvShape(text);
      assert.deepEqual(shape, { records: rows.length, headerCells: rows[0]?.length ?? 0, cells: rows.reduce((k, r) => k + r.length, 0) }, JSON.stringify(text));
    }),
    { seed: 21, numRuns: 2000 },
  );
});

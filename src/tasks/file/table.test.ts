import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { MAX_DATA_BYTES, TableError, formatOf, readTable } from './table.js';

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
  await assert.rejects(readTable(file('ragged.csv', 'a,b\n1,2\n3\n')), (e: Error) => e instanceof TableError && /ragged\.csv: line 3 has 1 cells, the header has 2/.test(e.message));
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
  assert.deepEqual(t.rows.map((r) => [r.x, r.n, r.label]), [[1.5, 1, 'a'], [2.5, 2, 'b'], [3.5, 3, 'a']]);
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

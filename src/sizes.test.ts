/**
 * The house's size rules as a test beside the architecture test (docs/design.md, "Sizes"): a
 * newcomer should be able to read any function in one sitting and any file in one pass, and the
 * repository should run from a clone alone.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

/** A function's lines, the functions nested in it included. */
const MAX_FUNCTION_LINES = 120;
/** A source file's lines. */
const MAX_FILE_LINES = 450;
/** A line's characters (biome's width is 160 too; strings and tables escape it). */
const MAX_LINE_CHARS = 160;
/** How many source lines may be wider than MAX_LINE_CHARS in all. */
const MAX_WIDE_LINES = 20;

/** The tracked files of the repository, relative to its root (the tests run from the root). */
function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files'], { encoding: 'utf8', maxBuffer: 64 << 20 })
    .split('\n')
    .filter((f) => f.length > 0);
}

/** Source files of src/: not tests, not the test helpers. */
function sourceFiles(): string[] {
  return trackedFiles().filter((f) => f.startsWith('src/') && f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('src/testing/'));
}

/** Every function-like node of a file with a body, as "file:line name (n lines)" when over the limit. */
function longFunctions(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const lineOf = (pos: number): number => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
      const name = node.name ? node.name.getText(source) : '(anonymous)';
      if (lines > MAX_FUNCTION_LINES) found.push(`${file}:${lineOf(node.getStart(source)) + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const files = sourceFiles();

test('the scan sees the sources', () => {
  assert.ok(files.length > 100, `${files.length} source files`);
});

test(`every function in src/ is at most ${MAX_FUNCTION_LINES} lines, nested functions counted`, () => {
  assert.deepEqual(files.flatMap(longFunctions), []);
});

test(`every source file is at most ${MAX_FILE_LINES} lines`, () => {
  const big = files.map((f) => [f, readFileSync(f, 'utf8').split('\n').length] as const).filter(([, n]) => n > MAX_FILE_LINES);
  assert.deepEqual(
    big.map(([f, n]) => `${f} (${n} lines)`),
    [],
  );
});

test(`at most ${MAX_WIDE_LINES} source lines are wider than ${MAX_LINE_CHARS} characters`, () => {
  const wide = files.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .flatMap((line, i) => (line.length > MAX_LINE_CHARS ? [`${f}:${i + 1} (${line.length})`] : [])),
  );
  assert.ok(wide.length <= MAX_WIDE_LINES, `${wide.length} wide lines:\n${wide.join('\n')}`);
});

/** Paths that would tie the repository to one machine: a home, a work tree, the folder beside the clone. */
const OUTSIDE_PATH = /(^|[\s"'`(=])(\/work\/|\/root\/|\/Users\/|\.\.\/shared\/)/;

test('nothing in the repository names a path outside it', () => {
  const text = trackedFiles().filter((f) => !f.endsWith('package-lock.json') && !/\.(svg|png|gguf|parquet|db)$/.test(f));
  const named = text.flatMap((f) => {
    let body: string;
    try {
      body = readFileSync(f, 'utf8');
    } catch {
      return [];
    }
    return body.split('\n').flatMap((line, i) => (OUTSIDE_PATH.test(line) ? [`${f}:${i + 1}`] : []));
  });
  assert.deepEqual(
    named.filter((hit) => !hit.startsWith('src/sizes.test.ts:')),
    [],
  );
});

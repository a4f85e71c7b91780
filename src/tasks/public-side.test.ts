/**
 * The public side of the task registry never reaches its evaluation side. The import graph of the
 * TypeScript sources (type-only imports and re-exports included) is walked from every module of
 * src/tasks that code outside it imports (the CLI, the outer loop and its agents, serve, the
 * dashboard, the store, the benchmarks; `outer/scoring/hidden-score.ts` excepted, the one importer of the hidden
 * registry) and from every public definition file; no evaluate file and no hidden registry file
 * may be reachable. Only evaluation-side files import the evaluate files, and only
 * `outer/scoring/hidden-score.ts` imports the hidden registry.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const TASKS = join(ROOT, 'src', 'tasks');
const SCORE = join(ROOT, 'src', 'outer', 'scoring', 'hidden-score.ts');

/** Reads a source file's text, or null when there is none. */
type Reader = (file: string) => string | null;
const readSource: Reader = (file) => (existsSync(file) ? readFileSync(file, 'utf8') : null);

/** Every .ts file below `dir` (tests included; callers filter). */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.isFile() && e.name.endsWith('.ts') ? [p] : [];
  });
}

const isTest = (file: string): boolean => file.endsWith('.test.ts');
const inTasks = (file: string): boolean => file.startsWith(TASKS + sep);

/** A file of the evaluation side: an evaluate file (`evaluate.ts`, `evaluate-*.ts`) or the hidden registry and its types. */
function isEvaluationSide(file: string): boolean {
  if (!inTasks(file)) return false;
  return /^evaluate(-[\w-]+)?\.ts$/.test(basename(file)) || file === join(TASKS, 'hidden.ts') || file === join(TASKS, 'hidden-types.ts');
}

/** The .ts files `file` imports or re-exports from (relative specifiers; `import type` and `import()` count). */
function importsOf(file: string, read: Reader): string[] {
  const text = read(file);
  if (text === null) return [];
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((spec) => spec.startsWith('./') || spec.startsWith('../'))
    .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')))
    .filter((target) => read(target) !== null);
}

/** Every file reachable from `entries`, each with the file that first imported it (null for an entry). */
function reach(entries: string[], read: Reader): Map<string, string | null> {
  const from = new Map<string, string | null>(entries.map((e) => [e, null]));
  const queue = [...entries];
  while (queue.length) {
    const file = queue.shift()!;
    for (const target of importsOf(file, read)) {
      if (from.has(target)) continue;
      from.set(target, file);
      queue.push(target);
    }
  }
  return from;
}

/** The import chain from an entry to `file`, as paths relative to the repository. */
function chain(from: Map<string, string | null>, file: string): string {
  const path: string[] = [];
  for (let f: string | null | undefined = file; f; f = from.get(f)) path.unshift(relative(ROOT, f));
  return path.join(' → ');
}

/** The evaluation-side files reachable from `entries`, each with its import chain. */
function evaluationReached(entries: string[], read: Reader): string[] {
  const from = reach(entries, read);
  return [...from.keys()].filter(isEvaluationSide).map((f) => chain(from, f));
}

const SOURCES = [...tsFiles(join(ROOT, 'src')), ...tsFiles(join(ROOT, 'bench'))].filter((f) => !isTest(f));

/** The public entry files: every src/tasks module that code outside it imports (but `outer/scoring/hidden-score.ts`), and every public definition file. */
function publicEntries(): string[] {
  const outside = SOURCES.filter((f) => !inTasks(f) && f !== SCORE)
    .flatMap((f) => importsOf(f, readSource))
    .filter(inTasks);
  const definitionNames = ['define.ts', 'tasks.ts', 'examples.ts', 'scripted.ts', 'index.ts'];
  const definitions = SOURCES.filter((f) => inTasks(f) && definitionNames.includes(basename(f)));
  const registry = ['briefs.ts', 'extra.ts', 'reference-specs.ts', 'fingerprint.ts', 'file/register.ts', 'file/load.ts', 'file/new.ts'];
  return [...new Set([...outside, ...definitions, ...registry.map((f) => join(TASKS, f))])].sort();
}

test('the walk finds the public entries and, from the hidden registry, the evaluate files of every task source', () => {
  const entries = publicEntries().map((f) => relative(TASKS, f));
  for (const f of ['briefs.ts', 'extra.ts', 'families/index.ts', 'file/register.ts', 'control/define.ts', 'families/cartpole/define.ts']) {
    assert.ok(entries.includes(f), `entry ${f}`);
  }
  const fromHidden = [...reach([join(TASKS, 'hidden.ts')], readSource).keys()].map((f) => relative(TASKS, f));
  const sides = ['control', 'supervised', 'gymnasium', 'families', 'families/blobs', 'families/cartpole', 'file'];
  for (const f of sides.map((s) => `${s}/evaluate.ts`)) {
    assert.ok(fromHidden.includes(f), `hidden.ts reaches ${f}`);
  }
});

test('no evaluate file and no hidden registry file is reachable from the public side', () => {
  assert.deepEqual(evaluationReached(publicEntries(), readSource), []);
});

test('only evaluation-side files import the evaluate files, and only outer/scoring/hidden-score.ts (outside src/tasks) imports the hidden registry', () => {
  const bad: string[] = [];
  for (const f of SOURCES) {
    for (const target of importsOf(f, readSource).filter(isEvaluationSide)) {
      const allowed = inTasks(f) ? isEvaluationSide(f) : f === SCORE && /^hidden(-types)?\.ts$/.test(relative(TASKS, target));
      if (!allowed) bad.push(`${relative(ROOT, f)} imports ${relative(ROOT, target)}`);
    }
  }
  assert.deepEqual(bad, []);
  assert.ok(importsOf(SCORE, readSource).includes(join(TASKS, 'hidden.ts')), 'outer/scoring/hidden-score.ts imports tasks/hidden.ts');
});

test('the check fails when a public file imports an evaluate file, directly, as a type or through a re-export', () => {
  const at = (f: string): string => join(TASKS, f);
  const cases: Record<string, string>[] = [
    { 'fake/define.ts': "import { x } from './evaluate.js';", 'fake/evaluate.ts': '' },
    {
      'fake/define.ts': "import type { X } from '../fake/other.js';",
      'fake/other.ts': "export { y } from './evaluate-extra.js';",
      'fake/evaluate-extra.ts': '',
    },
    { 'fake/define.ts': 'import {\n  a,\n  b,\n} from "../hidden.js";', 'hidden.ts': '' },
    { 'fake/define.ts': "import './side.js';\nconst m = await import('./evaluate.js');", 'fake/side.ts': '', 'fake/evaluate.ts': '' },
  ];
  for (const files of cases) {
    const read: Reader = (f) => Object.entries(files).find(([name]) => at(name) === f)?.[1] ?? null;
    assert.equal(evaluationReached([at('fake/define.ts')], read).length, 1, JSON.stringify(files));
  }
  const clean: Reader = (f) => (f === at('fake/define.ts') ? "import { z } from './evaluation-notes.js';" : f === at('fake/evaluation-notes.ts') ? '' : null);
  assert.deepEqual(evaluationReached([at('fake/define.ts')], clean), []);
});

/**
 * The project's import graph, read from the TypeScript sources under `src/` (tests left out):
 * static imports, re-exports, `import type` and dynamic `import('…')` of relative paths. The
 * architecture test and the boundary tests check their rules on it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root, from this module's compiled place, `dist/src/testing/`. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Source files (relative to the repository root, e.g. `src/outer/loop.ts`) → the project files each imports. */
export type ImportGraph = Map<string, Set<string>>;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The import graph of every non-test `.ts` file under `src/` of `root`. */
export function importGraph(root: string = REPO_ROOT): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const abs of sources(join(root, 'src'))) {
    const file = relative(root, abs);
    const targets = new Set<string>();
    const { importedFiles } = ts.preProcessFile(readFileSync(abs, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue; // a package
      targets.add(relative(root, resolve(dirname(abs), fileName)).replace(/\.js$/, '.ts'));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The import circles of `graph`: its strongly connected components of more than one file (Tarjan). */
export function importCircles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

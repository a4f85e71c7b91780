/**
 * The architecture as a test over the real import graph (docs/design.md, "Layers"): the layer
 * order of `src/`'s rooms, no import circles, and only the scorer's side importing what the hidden
 * evaluation knows.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { type ImportGraph, importCircles, importGraph } from './testing/import-graph.js';

/** The rooms of `src/`, lowest first: a file may import its own room and the rooms below it. */
const LAYERS = ['util', 'spec', 'store', 'inner', 'tasks', 'run', 'outer', 'serve', 'dashboard', 'cli'] as const;
/** The secret-backed registry of hidden evaluations. */
const HIDDEN_REGISTRY = 'src/tasks/hidden.ts';
/** The evaluation secret, from which every held-out seed and split is drawn. */
const SECRET = 'src/tasks/secret.ts';
/** The scorer's side: the only room that may import the hidden registry. */
const SCORER_SIDE = 'src/outer/scoring/';
/**
 * Beside the scorer, who may read the secret: opening a run reads it once (and an experiment under
 * several secrets runs under each in turn, open-run.ts), hands it to the
 * scorer and records its identity (a hash); the noise table looks records up by that identity.
 */
const SECRET_READERS = ['src/outer/open-run.ts', 'src/cli/noise.ts'];

/** What the hidden evaluation knows: the evaluate files of src/tasks, the hidden registry and its types, the secret. */
function isEvaluationSide(file: string): boolean {
  if (!file.startsWith('src/tasks/')) return false;
  return /(^|\/)evaluate(-[\w-]+)?\.ts$/.test(file) || [HIDDEN_REGISTRY, 'src/tasks/hidden-types.ts', SECRET].includes(file);
}

const graph = importGraph();
const room = (file: string): string => file.split('/')[1];

test('the scan sees the project', () => {
  assert.ok(graph.size > 100, `${graph.size} source files`);
  assert.ok(graph.get('src/outer/loop.ts')?.size, 'the loop imports project modules');
  for (const dir of new Set([...graph.keys()].map(room))) {
    if (dir !== 'testing') assert.ok((LAYERS as readonly string[]).includes(dir), `src/${dir}/ has a place in LAYERS (docs/design.md)`);
  }
});

/** Imports that go up the layers, or from non-test code into src/testing. */
function layerViolations(g: ImportGraph): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of g) {
    const from = room(file);
    for (const target of targets) {
      const to = room(target);
      if (to === 'testing' && from !== 'testing') wrong.push(`${file} → ${target} (test helpers are for tests)`);
      if (from === 'testing' || to === 'testing') continue;
      if (LAYERS.indexOf(to as (typeof LAYERS)[number]) > LAYERS.indexOf(from as (typeof LAYERS)[number]))
        wrong.push(`${file} → ${target} (${from} is below ${to})`);
    }
  }
  return wrong;
}

/** Imports of the evaluation side from outside it and the scorer side (the secret's two readers excepted). */
function hiddenViolations(g: ImportGraph): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of g) {
    if (file.startsWith(SCORER_SIDE)) continue;
    for (const target of targets) {
      if (!isEvaluationSide(target)) continue;
      if (target === HIDDEN_REGISTRY || !isEvaluationSide(file)) {
        if (!(target === SECRET && SECRET_READERS.includes(file))) wrong.push(`${file} → ${target}`);
      }
    }
  }
  return wrong;
}

/** The graph with one import more. */
function withImport(from: string, to: string): ImportGraph {
  const g: ImportGraph = new Map([...graph].map(([f, t]) => [f, new Set(t)]));
  g.get(from)!.add(to);
  return g;
}

test('imports go down the layers, and only tests import src/testing', () => {
  assert.deepEqual(layerViolations(graph), []);
});

test('no import circles', () => {
  assert.deepEqual(importCircles(graph), []);
});

test('only the scorer side imports what the hidden evaluation knows', () => {
  const evaluationSide = [...graph.keys()].filter(isEvaluationSide);
  assert.ok(evaluationSide.length > 10, `the evaluation side: ${evaluationSide.join(', ')}`);
  assert.deepEqual(hiddenViolations(graph), []);
  const importers = [...graph].filter(([, targets]) => targets.has(HIDDEN_REGISTRY)).map(([file]) => file);
  assert.ok(importers.length > 0 && importers.every((f) => f.startsWith(SCORER_SIDE)), `the hidden registry's importers: ${importers.join(', ')}`);
});

test('each rule catches an import planted against it', () => {
  assert.deepEqual(layerViolations(withImport('src/inner/train.ts', 'src/outer/loop.ts')), ['src/inner/train.ts → src/outer/loop.ts (inner is below outer)']);
  assert.equal(layerViolations(withImport('src/outer/loop.ts', 'src/testing/specs.ts')).length, 1);
  assert.equal(importCircles(withImport('src/util/rng.ts', 'src/outer/loop.ts')).length, 1);
  for (const [from, to] of [
    ['src/outer/loop.ts', HIDDEN_REGISTRY],
    ['src/serve/service.ts', 'src/tasks/supervised/evaluate.ts'],
    ['src/tasks/briefs.ts', 'src/tasks/families/rings/evaluate.ts'],
    ['src/outer/pipeline.ts', SECRET],
    ['src/tasks/control/evaluate.ts', HIDDEN_REGISTRY],
  ]) {
    assert.deepEqual(hiddenViolations(withImport(from, to)), [`${from} → ${to}`], `${from} → ${to} is caught`);
  }
});

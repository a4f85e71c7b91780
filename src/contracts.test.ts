/**
 * The contracts between the TypeScript and the Python side, owned here and read there: the values
 * Python needs at run time are written from the TypeScript that owns them into
 * python/rrl_client/contracts.json, which `rrl_client.contracts` reads; this test fails when the
 * file and the TypeScript differ. `RRL_WRITE_CONTRACTS=1` writes the file instead (then commit it).
 * The extraction rule's cases are in src/spec/extract.cases.json (src/spec/extract.test.ts); the
 * server's answers are the OpenAPI document's component schemas (serve/openapi.ts), whose fields the
 * file lists for rrl_client/answers.py's types to be checked against.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { familyDraws } from './cli/flags/parse.js';
import { listenFlags } from './cli/flags/shared.js';
import type { TransferResult } from './outer/experiment.js';
import type { HeldOutRow } from './outer/transfer-summary.js';
import { openApiDocument } from './serve/openapi.js';
import { DEFAULT_SERVE_PORT } from './serve/server.js';
import { MAX_CANDIDATES, MAX_DEPTH } from './spec/extract.js';
import { FAMILIES } from './tasks/families/index.js';
import { familyTaskId, parseFamilyTaskId } from './tasks/families/types.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
/** Where the Python package reads the contracts (shipped inside it). */
const CONTRACTS_FILE = join(root, 'python', 'rrl_client', 'contracts.json');

/** Every field of `transfer.json` (`TransferResult`): the compiler refuses a key missing here or not in the type. */
const RESULT_FIELDS: Record<keyof TransferResult, true> = {
  options: true,
  curve: true,
  heldOut: true,
  spread: true,
  rows: true,
  families: true,
  verdict: true,
  paired: true,
  perSeed: true,
  secrets: true,
  confirmed: true,
  aims: true,
  files: true,
  notes: true,
  wallSeconds: true,
};

/** Every field of one repetition in `transfer.json`'s `perSeed`. */
const REPETITION_FIELDS: Record<keyof TransferResult['perSeed'][number], true> = {
  seed: true,
  secret: true,
  evalId: true,
  heldOut: true,
  rows: true,
  curve: true,
  confirmed: true,
  wallSeconds: true,
  readBack: true,
};

/** Every field of one held-out row (`rows`, and each repetition's `rows`). */
const ROW_FIELDS: Record<keyof HeldOutRow, true> = {
  task: true,
  zeroShot: true,
  controllerBest4: true,
  controllerBest16: true,
  controllerAdaptBest16: true,
  priorZeroShot: true,
  randomBest4: true,
  randomBest16: true,
  searchBest4: true,
  searchBest16: true,
  optunaTpeBest4: true,
  optunaTpeBest16: true,
  optunaCmaesBest4: true,
  optunaCmaesBest16: true,
  optunaTpeSeededBest4: true,
  optunaTpeSeededBest16: true,
  optunaCmaesSeededBest4: true,
  optunaCmaesSeededBest16: true,
  baseline: true,
};

/** `familyTaskId` as a Python format string: its numbers put back as `{seed}` and `{index}`. */
function familyTaskIdTemplate(): string {
  const seed = 1_234_567;
  const index = 7_654_321;
  return familyTaskId('{family}', seed, index).replace(String(seed), '{seed}').replace(String(index), '{index}');
}

/** A JSON Schema node as the OpenAPI document writes it. */
interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  required?: string[];
  anyOf?: SchemaNode[];
}

/** The fields of the server's answers: each component schema's properties and required ones, and each object nested in one as `Schema.field`. */
function answerFields(): Record<string, { properties: string[]; required: string[] }> {
  const components = (openApiDocument('contracts') as { components: { schemas: Record<string, SchemaNode> } }).components.schemas;
  const out: Record<string, { properties: string[]; required: string[] }> = {};
  const visit = (name: string, node: SchemaNode): void => {
    const object = node.properties ? node : node.anyOf?.find((n) => n.properties);
    if (!object?.properties) return;
    out[name] = { properties: Object.keys(object.properties), required: object.required ?? [] };
    for (const [field, sub] of Object.entries(object.properties)) visit(`${name}.${field}`, sub);
  };
  for (const [id, node] of Object.entries(components)) visit(id, node);
  return out;
}

/** The contracts as the TypeScript owns them (the content of python/rrl_client/contracts.json). */
function contracts(): Record<string, unknown> {
  const listen = listenFlags(DEFAULT_SERVE_PORT);
  return {
    $comment: 'Written by src/contracts.test.ts from the TypeScript that owns each value (RRL_WRITE_CONTRACTS=1); read by rrl_client.contracts.',
    serve: { defaultUrl: `http://${listen.host.default}:${listen.port.default}` },
    extraction: { maxCandidates: MAX_CANDIDATES, maxDepth: MAX_DEPTH },
    familyTask: { idTemplate: familyTaskIdTemplate(), defaultDrawCount: familyDraws(Object.keys(FAMILIES)[0])[0].count },
    transfer: { resultFields: Object.keys(RESULT_FIELDS), repetitionFields: Object.keys(REPETITION_FIELDS), rowFields: Object.keys(ROW_FIELDS) },
    answers: answerFields(),
  };
}

test('python/rrl_client/contracts.json is what the TypeScript owns', () => {
  const want = contracts();
  if (process.env.RRL_WRITE_CONTRACTS === '1') writeFileSync(CONTRACTS_FILE, `${JSON.stringify(want, null, 2)}\n`);
  const have: unknown = JSON.parse(readFileSync(CONTRACTS_FILE, 'utf8'));
  assert.deepEqual(have, want, `${CONTRACTS_FILE} differs from the TypeScript that owns it: rerun this test with RRL_WRITE_CONTRACTS=1 and commit the file`);
});

test('the family task-id template fills in to familyTaskId, and parses back', () => {
  const template = familyTaskIdTemplate();
  for (const [family, seed, index] of [
    ['rings', 1, 0],
    ['vega-more', 31, 12],
  ] as const) {
    const id = template.replace('{family}', family).replace('{seed}', String(seed)).replace('{index}', String(index));
    assert.equal(id, familyTaskId(family, seed, index));
    assert.deepEqual(parseFamilyTaskId(id), { family, seed, index });
  }
});

/**
 * `rrl export model`: the model a run leaves for its user. The pick: on the task asked for, the
 * spec with the best confirmed score (a proposal retrained on the harness's seeds, or the baseline
 * spec, whose seeds are its confirmation), its own job's model; with nothing confirmed, the best
 * single score, the card saying so. Rungs (trained on a share of their budget) are not picked.
 * The model goes out as ONNX with the card beside it (model-card.ts).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createRequire } from 'node:module';
import { ARTIFACT_FILES } from '../spec/artifact.js';
import { MODEL_FORMAT, type ModelFile, ModelRunner } from '../inner/model.js';
import { POLICY_FORMAT, type PolicyFile, PolicyRunner } from '../inner/policy.js';
import { type OnnxGraph, modelGraph, policyGraph } from '../inner/onnx/model-graph.js';
import { ONNX_ML_OPSET, ONNX_OPSET } from '../inner/onnx/graph.js';
import type { JobRow } from '../store/rows.js';
import { type Confirmation, type TaskReference, confirmation, latestAttempts, taskReference } from './noise.js';
import { CARD_FORMAT, MODEL_FILE, type ModelCard, cardMarkdown } from './model-card.js';

const require = createRequire(import.meta.url);
/** An installed package's version. */
const version = (p: string): string => (require(`${p}/package.json`) as { version: string }).version;
/** This project's version (its package.json is three levels above dist/src/outer/). */
const OWN_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** What to export: a job of the run by id, or the best of one task (the run's only task when it has one). */
export interface ExportRequest {
  job?: number;
  task?: string;
}

/** The job picked, with what the card says of it. */
export interface ExportPick {
  job: JobRow;
  confirmed: Confirmation | null;
  reference: TaskReference;
}

/** A task's public facts for the card, when the task is registered here. */
export interface TaskFacts {
  metric: string | null;
  title: string | null;
  /** What each input (feature or observation value) means, by name, as the brief says. */
  descriptions: Record<string, string>;
}

/** What the export wrote. */
export interface ExportResult {
  dir: string;
  card: ModelCard;
}

const usable = (r: JobRow): boolean =>
  r.status === 'succeeded' && r.artifactDir !== null && Number.isFinite(r.normalized) && (r.share === null || r.share >= 1);

/** Picks the job to export from a run's jobs; an unknown job or task, or a run with nothing trained, is an error in one line. */
export function pickExport(all: JobRow[], req: ExportRequest): ExportPick {
  return req.job !== undefined ? namedJob(all, req.job) : bestOfTask(all, req.task);
}

const ofTask = (all: JobRow[], task: string, kind: JobRow['kind']): JobRow[] => all.filter((r) => r.task === task && r.kind === kind);

/** `--job N`: that job, with its confirmation if it has one. */
function namedJob(all: JobRow[], id: number): ExportPick {
  const job = all.find((r) => r.id === id);
  if (!job) throw new Error(`the run has no job ${id}`);
  if (!usable(job)) throw new Error(`job ${job.id} has no model to export (${job.status}${job.error ? `: ${job.error}` : ''})`);
  const baselines = ofTask(all, job.task, 'baseline');
  const reference = taskReference(baselines);
  const confirms = all.filter((r) => r.kind === 'confirm' && r.parentId === job.id);
  return { job, reference, confirmed: job.kind === 'baseline' ? baselineConfirmation(baselines, reference) : confirmation(confirms, reference) };
}

/** The task asked for (the run's only one by default): its best confirmed spec's job, else its best single score. */
function bestOfTask(all: JobRow[], asked: string | undefined): ExportPick {
  const tasks = [...new Set(all.filter((r) => (r.kind === 'proposal' || r.kind === 'baseline') && usable(r)).map((r) => r.task))];
  if (!tasks.length) throw new Error('the run has no succeeded job with a model to export');
  const list = `${tasks.slice(0, 12).join(', ')}${tasks.length > 12 ? ', …' : ''}`;
  const task = asked ?? (tasks.length === 1 ? tasks[0] : null);
  if (task === null) throw new Error(`the run trained ${tasks.length} tasks; name one with --task (${list})`);
  if (!tasks.includes(task)) throw new Error(`the run has no trained model of task "${task}" (its tasks: ${list})`);
  const baselineRows = ofTask(all, task, 'baseline');
  const reference = taskReference(baselineRows);
  const confirms = ofTask(all, task, 'confirm');
  const candidates: ExportPick[] = ofTask(all, task, 'proposal')
    .filter(usable)
    .map((job) => ({
      job,
      reference,
      confirmed: confirmation(
        confirms.filter((c) => c.parentId === job.id),
        reference,
      ),
    }));
  const baseline = latestAttempts(baselineRows).filter(usable)[0];
  if (baseline) candidates.push({ job: baseline, reference, confirmed: baselineConfirmation(baselineRows, reference) });
  const confirmedScore = (p: ExportPick): number =>
    p.confirmed?.complete && p.confirmed.normalized !== null ? p.confirmed.normalized : Number.NEGATIVE_INFINITY;
  const best = (score: (p: ExportPick) => number): ExportPick => candidates.reduce((a, b) => (score(b) > score(a) ? b : a));
  const confirmed = best(confirmedScore);
  if (Number.isFinite(confirmedScore(confirmed))) return confirmed;
  return { ...best((p) => p.job.normalized as number), confirmed: null };
}

/** The baseline spec's seeds as its confirmation: the reference is their mean. */
function baselineConfirmation(rows: JobRow[], ref: TaskReference): Confirmation | null {
  if (ref.mean === null || ref.scored < 2) return null;
  const latest = latestAttempts(rows);
  return {
    normalized: ref.mean,
    uncertainty: ref.uncertainty,
    complete: ref.scored === ref.seeds,
    scored: ref.scored,
    failed: ref.seeds - ref.scored,
    unscorable: 0,
    jobIds: latest.map((r) => r.id),
  };
}

/** The artifact's directory: as recorded, else under the run directory (a run moved since). */
export function artifactDirOf(runDir: string, job: Pick<JobRow, 'artifactDir'>): string {
  const recorded = job.artifactDir ?? '';
  if (existsSync(recorded)) return recorded;
  const moved = join(runDir, 'jobs', basename(recorded));
  if (existsSync(moved)) return moved;
  throw new Error(`the job's artifact directory ${recorded} is gone`);
}

/** The trained file of an artifact as an ONNX graph; a file the engine would not load is an error naming it. */
export function artifactGraph(dir: string): { graph: OnnxGraph; kind: ModelCard['task']['kind']; classes: string[] | null } {
  const file = existsSync(join(dir, ARTIFACT_FILES.policy)) ? ARTIFACT_FILES.policy : ARTIFACT_FILES.model;
  let parsed: { format?: unknown };
  try {
    parsed = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { format?: unknown };
  } catch (err) {
    throw new Error(`${join(dir, file)}: ${(err as Error).message.split('\n')[0]}`);
  }
  const v = OWN_VERSION;
  try {
    if (parsed?.format === POLICY_FORMAT) {
      new PolicyRunner(parsed as PolicyFile);
      return { graph: policyGraph(parsed as PolicyFile, v), kind: 'control', classes: null };
    }
    if (parsed?.format === MODEL_FORMAT) {
      new ModelRunner(parsed as ModelFile);
      const m = parsed as ModelFile;
      return { graph: modelGraph(m, v), kind: m.kind, classes: m.kind === 'classification' ? (m.classes ?? []) : null };
    }
  } catch (err) {
    throw new Error(`${join(dir, file)}: ${(err as Error).message}`);
  }
  throw new Error(`${join(dir, file)}: not a model or policy file of this engine (format ${JSON.stringify(parsed?.format)})`);
}

/** Where an export's model comes from and what the card says of its making. */
export interface ExportSource {
  /** The artifact directory holding the trained file. */
  dir: string;
  task: string;
  job: ModelCard['job'];
  spec: unknown;
  score: ModelCard['score'];
  cost: ModelCard['cost'];
  fingerprint: string | null;
}

/** The picked job of a run as an export's source. */
export function pickSource(runDir: string, runId: string, pick: ExportPick, fingerprint: string | null): ExportSource {
  const { job, confirmed, reference } = pick;
  return {
    dir: artifactDirOf(runDir, job),
    task: job.task,
    job: { run: runId, id: job.id, kind: job.kind, agent: job.agent },
    spec: job.spec,
    score: {
      raw: job.raw,
      normalized: job.normalized,
      stderr: job.stderr,
      confirmed: confirmed
        ? { normalized: confirmed.normalized, uncertainty: finiteOrNull(confirmed.uncertainty), seeds: confirmed.scored, failed: confirmed.failed }
        : null,
      baseline: reference.mean,
    },
    cost: { wallSeconds: job.wallSeconds, cpuSeconds: job.cpuSeconds, examples: job.examples, envSteps: job.envSteps },
    fingerprint,
  };
}

/** A job's artifact directory outside any run (`rrl job run --out`) as an export's source: no score is known. */
export function artifactSource(dir: string): ExportSource {
  const read = (name: string): Record<string, unknown> | null => {
    try {
      return JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, unknown>;
    } catch {
      return null;
    }
  };
  const spec = read(ARTIFACT_FILES.spec);
  if (!spec || typeof spec.task !== 'string') throw new Error(`${dir}: not a job's artifact directory (no ${ARTIFACT_FILES.spec} naming its task)`);
  const cost = read(ARTIFACT_FILES.cost) ?? {};
  const n = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    dir,
    task: spec.task,
    job: { run: null, id: null, kind: null, agent: null },
    spec,
    score: { raw: null, normalized: null, stderr: null, confirmed: null, baseline: null },
    cost: { wallSeconds: n(cost.wallSeconds), cpuSeconds: n(cost.cpuSeconds), examples: n(cost.examples), envSteps: n(cost.envSteps) },
    fingerprint: null,
  };
}

/** Writes `model.onnx`, `card.json` and `card.md` of the source's model into `out`. */
export function writeExport(src: ExportSource, facts: TaskFacts, out: string): ExportResult {
  const { graph, kind, classes } = artifactGraph(src.dir);
  const card: ModelCard = {
    format: CARD_FORMAT,
    model: MODEL_FILE,
    task: { id: src.task, kind, classes, metric: facts.metric, title: facts.title },
    job: src.job,
    spec: src.spec,
    data: { fingerprint: src.fingerprint },
    score: src.score,
    cost: src.cost,
    inputs: Array.isArray(graph.inputs)
      ? graph.inputs.map((i) => (facts.descriptions[i.name] ? { ...i, description: facts.descriptions[i.name] } : i))
      : graph.inputs,
    outputs: graph.outputs,
    versions: versions(),
    exportedAt: new Date().toISOString(),
  };
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, MODEL_FILE), graph.bytes);
  writeFileSync(join(out, 'card.json'), `${JSON.stringify(card, null, 2)}\n`);
  writeFileSync(join(out, 'card.md'), cardMarkdown(card));
  return { dir: out, card };
}

const finiteOrNull = (v: number): number | null => (Number.isFinite(v) ? v : null);

/** The versions a card records: this project, Node, the ONNX opsets and the runtime `rrl predict` uses. */
function versions(): Record<string, string> {
  return {
    'recursive-rl': OWN_VERSION,
    node: process.versions.node,
    'onnx opset': String(ONNX_OPSET),
    'ai.onnx.ml opset': String(ONNX_ML_OPSET),
    'onnxruntime-node': version('onnxruntime-node'),
  };
}

/**
 * Warm start from the harness's own records (expert iteration): the best jobs of finished runs as
 * supervised fine-tuning data. For every task of one split (`train` by default — a held-out task
 * never appears), the succeeded proposals that beat the task's reference by more than the noise,
 * best first, at most `perTask` distinct ones, each written as a (prompt, patch) pair in TRL's
 * conversational format: `{"messages": [system, user, assistant], "task", "score", "reward", "run", "job"}`,
 * the assistant's content being the JSON Merge Patch (RFC 7396) that turns the task's baseline
 * spec into the job's validated spec, seed left out.
 *
 * The bar is the reward's own (outer/reward.ts `bonusThreshold`): a job's score must beat the mean
 * of the run's baseline seeds by max(the rule's margin, 2·sqrt(u² + u_ref²)), where u is the job's
 * uncertainty (the evaluation's standard error and the task's training noise, or the confirmation's
 * where the harness confirmed the spec) and u_ref the reference's; `minMargin` raises the floor.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { validateSpec } from '../inner/spec-check.js';
import { oneLine } from '../spec/bounds.js';
import type { TaskBrief } from '../spec/brief.js';
import { type JsonObject, isJsonObject } from '../spec/patch.js';
import { answerPatch, readAnswer } from './answer.js';
import { type JobRow, Store } from '../store/store.js';
import { getPublicTask } from '../tasks/briefs.js';
import { type FamilyDraw, registerFamilyTasks } from '../tasks/families/index.js';
import { buildPrompt } from './agents/prompt.js';
import type { ChatMessage } from './agents/types.js';
import { seedlessKey } from './identity.js';
import { scoreUncertainty, taskReference, withSeed } from './noise.js';
import { bonusThreshold } from './reward.js';
import { confirmations } from './settle.js';
import { writeJsonLines } from './json-lines.js';

/** The task splits a brief can be in. */
export type Split = TaskBrief['split'];

/** Every split, for flag checks. */
export const SPLITS: readonly Split[] = ['train', 'held-out', 'example'];

/** What `exportSft` selects. */
export interface SftOptions {
  /** At most this many rows per task (default 4). */
  perTask?: number;
  /** A floor on how far above the reference a score must be, in normalised units (default 0: the reward's rule alone). */
  minMargin?: number;
  /** Only tasks of this split (default `train`). */
  split?: Split;
  /** The prompt's documentation budget (patch-prompt.ts `DOC_CHARS` by default; 0 drops it). */
  docChars?: number;
}

/** One SFT row, as written (one JSON line). */
export interface SftRow {
  messages: ChatMessage[];
  task: string;
  /** The hidden normalised score the job is ranked by (the confirmed mean where the harness confirmed it). */
  score: number;
  /** The outer reward the job was paid (null where none was recorded). */
  reward: number | null;
  run: string;
  job: number;
}

/** What became of one task's jobs. */
export interface SftTaskSummary {
  task: string;
  split: Split | null;
  /** Succeeded full-budget proposals seen over every run. */
  seen: number;
  /** Of those, the ones that beat the reference by more than the noise and changed more than the seed. */
  better: number;
  kept: number;
  /** Why nothing of the task was kept, when that is not for lack of a better job. */
  note: string | null;
}

/**
 * The prompt an SFT row is trained on: the patch prompt over the task's baseline (what
 * `GET /v1/tasks/{id}/prompt?form=patch` serves and `--prompt-form patch` trains on), answered by
 * the row's patch.
 */
export function sftPrompt(brief: TaskBrief, docChars?: number): ChatMessage[] {
  return buildPrompt(brief, { patch: true, example: getPublicTask(brief.id).baseline, docChars });
}

/** The spec a patch stands for over `baseline`, by the answer rule (outer/answer.ts). */
function applied(baseline: unknown, patch: JsonObject): unknown {
  const r = readAnswer(patch, baseline);
  return r.ok ? r.spec : null;
}

const validated = (spec: unknown, brief: TaskBrief): JsonObject | null => {
  const r = validateSpec(spec, brief);
  return r.ok ? (r.spec as unknown as JsonObject) : null;
};

const withoutSeed = (patch: unknown): JsonObject => {
  const out = isJsonObject(patch) ? { ...patch } : {};
  delete out.seed;
  return out;
};

/**
 * The merge patch from the task's baseline to `spec`, seed left out: the smallest one between the
 * two validated specs when applying it to the baseline as written validates back to `spec` (seed
 * aside), else the patch from the baseline as written. Null when `spec` is not valid for the task.
 */
export function sftPatch(brief: TaskBrief, baseline: unknown, spec: unknown): JsonObject | null {
  const want = validated(spec, brief);
  const from = validated(baseline, brief);
  if (!want || !from) return null;
  const seedless = (s: unknown): unknown => withSeed(s, 0);
  const gives = (patch: JsonObject): boolean => isDeepStrictEqual(seedless(validated(applied(baseline, patch), brief)), seedless(want));
  const small = withoutSeed(answerPatch(from, want));
  if (gives(small)) return small;
  const plain = withoutSeed(answerPatch(baseline, want));
  return gives(plain) ? plain : null;
}

/** A scored proposal of one run, with what it is ranked by. */
interface Candidate {
  row: JobRow;
  runId: string;
  score: number;
  beats: boolean;
}

/**
 * Registers the family draws a run recorded (`rrl train --family`, `rrl serve --family`: both store
 * `families` in the run's config), so that their tasks are known here as they were to the run.
 */
export function registerRunFamilies(config: unknown): void {
  const families = isJsonObject(config) && Array.isArray(config.families) ? (config.families as unknown[]) : [];
  for (const d of families) {
    if (!isJsonObject(d)) continue;
    const { family, count, seed } = d as Partial<FamilyDraw>;
    if (typeof family === 'string' && Number.isInteger(count) && Number.isInteger(seed)) registerFamilyTasks(family, count as number, seed as number);
  }
}

/** One run's succeeded full-budget proposals per task, scored against that run's own reference. */
function runCandidates(runDir: string, minMargin: number): { runId: string; byTask: Map<string, Candidate[]>; noReference: Set<string> } {
  if (!existsSync(join(runDir, 'store.db'))) throw new Error(`no run in ${runDir}: store.db not found`);
  let store: Store | undefined;
  try {
    store = new Store(runDir);
    const run = store.getRun();
    if (!run) throw new Error('the store has no run');
    registerRunFamilies(run.config);
    const jobs = store.jobs(run.id);
    const of = (kind: JobRow['kind'], task: string): JobRow[] => jobs.filter((j) => j.kind === kind && j.task === task);
    const byTask = new Map<string, Candidate[]>();
    const noReference = new Set<string>();
    const fullBudget = (j: JobRow): boolean => j.share === null || j.share >= 1;
    const proposals = jobs.filter((j) => j.kind === 'proposal' && j.status === 'succeeded' && fullBudget(j) && Number.isFinite(j.normalized));
    for (const task of new Set(proposals.map((j) => j.task))) {
      const mine = proposals.filter((j) => j.task === task);
      const ref = taskReference(of('baseline', task));
      if (ref.mean === null) noReference.add(task);
      const confirmed = confirmations(mine, of('confirm', task), ref);
      byTask.set(
        task,
        mine.map((row) => {
          const c = confirmed.get(row.id);
          const score = c?.normalized ?? (row.normalized as number);
          const u = c ? c.uncertainty : scoreUncertainty(row.stderr, ref);
          const beats = ref.mean !== null && score - ref.mean > Math.max(minMargin, bonusThreshold(u, ref.uncertainty));
          return { row, runId: run.id, score, beats };
        }),
      );
    }
    return { runId: run.id, byTask, noReference };
  } catch (err) {
    throw new Error(`${runDir}: cannot read the run's store (${oneLine(err instanceof Error ? err.message : err, 300)})`);
  } finally {
    store?.close();
  }
}

/** The public brief of `task`, or null when it is unknown here (a task file not loaded, a family not drawn). */
export const briefOf = (task: string): TaskBrief | null => {
  try {
    return getPublicTask(task).brief;
  } catch {
    return null;
  }
};

/** The SFT rows of the runs (tasks in first-seen order, each task's rows best first) and a summary per task. */
export function sftRows(runDirs: string[], options: SftOptions = {}): { rows: SftRow[]; tasks: SftTaskSummary[] } {
  const perTask = options.perTask ?? 4;
  const split = options.split ?? 'train';
  const pooled = new Map<string, Candidate[]>();
  const noReference = new Map<string, number>();
  for (const dir of runDirs) {
    const r = runCandidates(dir, options.minMargin ?? 0);
    for (const [task, cands] of r.byTask) pooled.set(task, [...(pooled.get(task) ?? []), ...cands]);
    for (const task of r.noReference) noReference.set(task, (noReference.get(task) ?? 0) + 1);
  }
  const rows: SftRow[] = [];
  const tasks: SftTaskSummary[] = [];
  for (const [task, cands] of pooled) {
    const brief = briefOf(task);
    const summary: SftTaskSummary = { task, split: brief?.split ?? null, seen: cands.length, better: 0, kept: 0, note: null };
    tasks.push(summary);
    if (!brief) {
      summary.note = 'unknown task here (from a task file? pass --task-dir), skipped';
      continue;
    }
    if (brief.split !== split) {
      summary.note = `split ${brief.split}, skipped`;
      continue;
    }
    if (noReference.has(task)) summary.note = `no baseline score in ${noReference.get(task)} run(s): their jobs cannot count`;
    const baseline = getPublicTask(task).baseline;
    const seenSpecs = new Set<string>();
    const ranked = cands.filter((c) => c.beats).sort((a, b) => b.score - a.score || a.row.id - b.row.id);
    for (const c of ranked) {
      const patch = sftPatch(brief, baseline, c.row.spec);
      if (!patch || !Object.keys(patch).length) continue; // the baseline reseeded, or a spec not valid here
      summary.better++;
      const key = seedlessKey(applied(baseline, patch));
      if (seenSpecs.has(key) || summary.kept >= perTask) continue;
      seenSpecs.add(key);
      summary.kept++;
      rows.push({
        messages: [...sftPrompt(brief, options.docChars), { role: 'assistant', content: JSON.stringify(patch) }],
        task,
        score: c.score,
        reward: c.row.reward,
        run: c.runId,
        job: c.row.id,
      });
    }
  }
  return { rows, tasks };
}

/** One summary line: `TASK: kept K of N jobs (B beat the reference)`, and the note if any. */
export function summaryLine(s: SftTaskSummary): string {
  return `${s.task} (${s.split ?? 'unknown'}): kept ${s.kept} of ${s.seen} succeeded job(s), ${s.better} beat the reference${s.note ? `; ${s.note}` : ''}`;
}

/** Writes the SFT rows of the runs to `out` as JSON Lines; returns the rows and the per-task summary. */
export function exportSft(runDirs: string[], options: SftOptions & { out: string }): { rows: number; path: string; tasks: SftTaskSummary[] } {
  if (!runDirs.length) throw new Error('no run given');
  const perTask = options.perTask ?? 4;
  if (!Number.isInteger(perTask) || perTask < 1) throw new Error(`--per-task must be a positive integer, got ${perTask}`);
  const { rows, tasks } = sftRows(runDirs, options);
  mkdirSync(dirname(options.out), { recursive: true });
  writeJsonLines(options.out, rows);
  return { rows: rows.length, path: options.out, tasks };
}

/**
 * Exports a run's LLM proposals as GRPO training data, read from the run's store: one row per
 * proposal that has a completion and a reward, with the prompt messages it was sampled from,
 * the completion, the outer reward, the group-normalised advantage, the group id and the job id.
 *
 * Like `rrl export sft`, only the tasks of one split are written (`train` by default: a held-out
 * task's proposals never become training data unless asked for), and each row carries its
 * task's split (the brief's: `train`, `held-out` or `example`). A task unknown here (a task file
 * not loaded) is skipped and said so.
 *
 * - `trl`: JSON Lines for TRL (`prompt` as chat messages, `completion` as one assistant
 *   message — TRL's conversational prompt-completion format — plus `reward`, `advantage`,
 *   `group_id`, `job_id` and the token log-probabilities when the server returned them);
 * - `verl`: Parquet in verl's RL dataset layout: `data_source`, `prompt` (a list of
 *   {role, content} structs), `ability`, `reward_model` (a {style, ground_truth} struct) and
 *   `extra_info` (a struct with the completion, reward, advantage, ids and model).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { Store } from '../store/store.js';
import type { ChatMessage } from './agents/types.js';
import type { LlmTrace } from './agents/llm/trace.js';
import { writeJsonLines } from './json-lines.js';
import { type Split, briefOf, registerRunFamilies } from './sft-export.js';

/** The export formats. */
export const EXPORT_FORMATS = ['trl', 'verl'] as const;
/** One of `EXPORT_FORMATS`. */
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** One proposal as a GRPO sample. */
export interface GrpoSample {
  jobId: number;
  runId: string;
  iteration: number;
  slot: number;
  task: string;
  /** The task's split (its brief's), null when the task is unknown here. */
  split: Split | null;
  groupId: string;
  prompt: ChatMessage[];
  completion: string;
  reward: number;
  advantage: number;
  status: string;
  error: string | null;
  /** The model the completion was sampled from: the adapter's name, or the base model. */
  model: string;
  adapter: string | null;
  repaired: boolean;
  tokens: string[] | null;
  logprobs: number[] | null;
}

const isLlmTrace = (t: unknown): t is LlmTrace => typeof t === 'object' && t !== null && (t as { kind?: unknown }).kind === 'llm';

/** A GRPO sample from an LLM trace (prompt, completion, model, log-probabilities) and what its job earned. */
export function sampleFromTrace(
  t: LlmTrace,
  job: Pick<GrpoSample, 'jobId' | 'runId' | 'iteration' | 'slot' | 'task' | 'groupId' | 'reward' | 'advantage' | 'status' | 'error'>,
): GrpoSample {
  return {
    ...job,
    split: briefOf(job.task)?.split ?? null,
    prompt: t.messages,
    completion: t.completion ?? '', // callers pass traces with a completion
    model: t.adapter ?? t.model,
    adapter: t.adapter,
    repaired: t.repaired,
    tokens: t.logprobs ? t.logprobs.map((l) => l.token) : null,
    logprobs: t.logprobs ? t.logprobs.map((l) => l.logprob) : null,
  };
}

/** What `grpoSamples` selects. */
export interface GrpoOptions {
  /** Only this iteration (0-based). */
  iteration?: number;
  /** Only tasks of this split (default `train`). */
  split?: Split;
}

/** What became of one task's proposals in an export. */
export interface GrpoTaskSummary {
  task: string;
  split: Split | null;
  rows: number;
  /** Why its rows were left out (another split, an unknown task); null when they were written. */
  skipped: string | null;
}

/** The rows' tasks with what became of them, in first-seen order. */
function summaries(all: GrpoSample[], split: Split): GrpoTaskSummary[] {
  const out = new Map<string, GrpoTaskSummary>();
  for (const s of all) {
    const t = out.get(s.task) ?? {
      task: s.task,
      split: s.split,
      rows: 0,
      skipped: s.split === null ? 'unknown task here (from a task file? pass --task-dir), skipped' : s.split !== split ? `split ${s.split}, skipped` : null,
    };
    t.rows += 1;
    out.set(s.task, t);
  }
  return [...out.values()];
}

/** One summary line: `TASK (split): N row(s)`, or why they were skipped. */
export function grpoSummaryLine(t: GrpoTaskSummary): string {
  return `${t.task} (${t.split ?? 'unknown'}): ${t.skipped ? `${t.rows} row(s) not written; ${t.skipped}` : `${t.rows} row(s)`}`;
}

/**
 * The run's LLM proposals with a completion and a reward on tasks of `options.split` (`train` by
 * default; optionally of one iteration), in job order, and what became of each task's.
 */
export function grpoExport(runDir: string, options: GrpoOptions = {}): { samples: GrpoSample[]; tasks: GrpoTaskSummary[] } {
  const split = options.split ?? 'train';
  const all = allSamples(runDir, options.iteration);
  return { samples: all.filter((s) => s.split === split), tasks: summaries(all, split) };
}

/** The run's LLM proposals on tasks of `options.split` (`train` by default), as `grpoExport` selects them. */
export function grpoSamples(runDir: string, options: GrpoOptions = {}): GrpoSample[] {
  return grpoExport(runDir, options).samples;
}

/** Every LLM proposal of the run with a completion and a reward (optionally of one iteration), in job order. */
function allSamples(runDir: string, iteration?: number): GrpoSample[] {
  if (!existsSync(join(runDir, 'store.db'))) throw new Error(`no run in ${runDir}: store.db not found`);
  const store = new Store(runDir);
  try {
    const run = store.getRun();
    if (!run) throw new Error(`no run in ${runDir}: the store has no run`);
    registerRunFamilies(run.config); // a generated task's brief (and split) is known as it was to the run
    const out: GrpoSample[] = [];
    for (const j of store.jobs(run.id, { kind: 'proposal', round: iteration })) {
      const t = j.trace;
      if (!isLlmTrace(t) || t.completion === null || j.reward === null) continue;
      const groupId = j.groupId ?? `it${j.round}/${j.task}`;
      const job = { jobId: j.id, runId: run.id, iteration: j.round, slot: j.slot, task: j.task, groupId };
      out.push(sampleFromTrace(t, { ...job, reward: j.reward, advantage: j.advantage ?? 0, status: j.status, error: j.error }));
    }
    return out;
  } finally {
    store.close();
  }
}

/** One TRL row (JSON Lines). */
export function trlRow(s: GrpoSample): Record<string, unknown> {
  return {
    prompt: s.prompt,
    completion: [{ role: 'assistant', content: s.completion }],
    reward: s.reward,
    advantage: s.advantage,
    group_id: s.groupId,
    job_id: s.jobId,
    task: s.task,
    split: s.split,
    iteration: s.iteration,
    status: s.status,
    model: s.model,
    completion_tokens: s.tokens,
    completion_logprobs: s.logprobs,
  };
}

const STRING = { type: 'BYTE_ARRAY', converted_type: 'UTF8' } as const;

/** Writes verl's layout as Parquet with nested columns; returns the file's bytes. */
export function verlParquet(samples: GrpoSample[]): ArrayBuffer {
  const extra = [
    { name: 'split', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'index', type: 'INT64', repetition_type: 'REQUIRED' },
    { name: 'job_id', type: 'INT64', repetition_type: 'REQUIRED' },
    { name: 'run_id', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'iteration', type: 'INT32', repetition_type: 'REQUIRED' },
    { name: 'task', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'group_id', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'completion', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'reward', type: 'DOUBLE', repetition_type: 'REQUIRED' },
    { name: 'advantage', type: 'DOUBLE', repetition_type: 'REQUIRED' },
    { name: 'status', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'model', ...STRING, repetition_type: 'REQUIRED' },
  ] as const;
  const schema = [
    { name: 'root', num_children: 5 },
    { name: 'data_source', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'prompt', repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', repetition_type: 'REQUIRED', num_children: 2 },
    { name: 'role', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'content', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'ability', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'reward_model', repetition_type: 'REQUIRED', num_children: 2 },
    { name: 'style', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'ground_truth', ...STRING, repetition_type: 'REQUIRED' },
    { name: 'extra_info', repetition_type: 'REQUIRED', num_children: extra.length },
    ...extra,
  ];
  return parquetWriteBuffer({
    columnData: [
      { name: 'data_source', data: samples.map((s) => `recursive-rl/${s.task}`) },
      { name: 'prompt', data: samples.map((s) => s.prompt.map((m) => ({ role: m.role, content: m.content }))) },
      { name: 'ability', data: samples.map(() => 'job-design') },
      { name: 'reward_model', data: samples.map((s) => ({ style: 'rrl-outer-reward', ground_truth: s.task })) },
      {
        name: 'extra_info',
        data: samples.map((s, i) => ({
          split: s.split ?? 'unknown',
          index: BigInt(i),
          job_id: BigInt(s.jobId),
          run_id: s.runId,
          iteration: s.iteration,
          task: s.task,
          group_id: s.groupId,
          completion: s.completion,
          reward: s.reward,
          advantage: s.advantage,
          status: s.status,
          model: s.model,
        })),
      },
    ],
    schema: schema as Parameters<typeof parquetWriteBuffer>[0]['schema'],
  });
}

/** Exports a run's proposals on tasks of a split (or of one iteration) in `format` to `out`; returns the row count and a summary per task. */
export function exportGrpo(
  runDir: string,
  options: GrpoOptions & { format: ExportFormat; out: string },
): { rows: number; path: string; tasks: GrpoTaskSummary[] } {
  const { samples, tasks } = grpoExport(runDir, options);
  mkdirSync(dirname(options.out), { recursive: true });
  if (options.format === 'trl') {
    writeJsonLines(options.out, samples.map(trlRow));
  } else if (options.format === 'verl') {
    writeFileSync(options.out, new Uint8Array(verlParquet(samples)));
  } else {
    throw new Error(`unknown export format "${String(options.format)}"; choose ${EXPORT_FORMATS.join(', ')}`);
  }
  return { rows: samples.length, path: options.out, tasks };
}

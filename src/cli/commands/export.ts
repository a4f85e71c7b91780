/** `rrl export grpo|sft|tensorboard|model`: a run's records as GRPO data, SFT data or TensorBoard event files, and its model (model.ts). */
import { DOC_CHARS, MAX_DOC_CHARS } from '../../outer/agents/patch-prompt.js';
import { registerCorpusSelection, registerCorpusTasks } from '../../tasks/corpus/register.js';
import { listTasks } from '../../tasks/briefs.js';
import { existsSync } from 'node:fs';
import { storedConfig } from '../stored-run.js';
import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { EXPORT_FORMATS, exportGrpo, grpoSummaryLine } from '../../outer/grpo-export.js';
import { SPLITS, exportSft, summaryLine } from '../../outer/sft-export.js';
import { exportTensorboard } from '../../dashboard/tensorboard.js';
import { useTaskDir } from '../task-dir.js';
import { int, oneOf, real } from '../flags/parse.js';
import { taskDirFlag } from '../flags/shared.js';
import { registerExportModel } from './model.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const GRPO_FLAGS = flagTable({
  format: { flag: '--format <format>', help: 'trl (JSON Lines) | verl (Parquet)', required: true },
  out: { flag: '--out <path>', help: 'output file', required: true },
  iteration: { flag: '--iteration <n>', help: 'only this iteration (1-based)', parse: int(1, 1_000_000) },
  split: { flag: '--split <split>', help: 'only tasks of this split: train | held-out | example', default: 'train' },
  taskDir: taskDirFlag(),
});

const SFT_FLAGS = flagTable({
  out: { flag: '--out <file>', help: 'output file (JSON Lines)', required: true },
  perTask: { flag: '--per-task <k>', help: 'at most K distinct patches per task', parse: int(1, 1_000_000), default: 4 },
  minMargin: {
    flag: '--min-margin <m>',
    help: "a floor on a kept job's lead over the reference (normalised units), beside the reward's noise rule",
    parse: real(0, 100),
    default: 0,
  },
  split: { flag: '--split <split>', help: 'only tasks of this split: train | held-out | example', default: 'train' },
  docChars: {
    flag: '--doc-chars <n>',
    help: "characters of the task's documentation in each row's prompt (0: none), as GET /v1/tasks/{id}/prompt?form=patch&doc=N serves it",
    parse: int(0, MAX_DOC_CHARS),
    default: DOC_CHARS,
  },
  taskDir: taskDirFlag(),
});

const TENSORBOARD_FLAGS = flagTable({
  out: { flag: '--out <dir>', help: 'output directory (point `tensorboard --logdir` at it)', required: true },
});

/** `rrl export grpo`: the LLM agent's proposals on the tasks of a split as GRPO data, with a summary line per task. */
async function exportGrpoData(runDir: string, o: FlagValues<typeof GRPO_FLAGS>): Promise<void> {
  const format = oneOf('--format', EXPORT_FORMATS, o.format);
  const split = oneOf('--split', SPLITS, o.split);
  await useTaskDir(o.taskDir);
  const r = exportGrpo(resolve(runDir), { format, out: resolve(o.out), iteration: o.iteration === undefined ? undefined : o.iteration - 1, split });
  for (const t of r.tasks) console.error(grpoSummaryLine(t));
  console.error(`${r.rows} row(s) written to ${r.path}`);
}

/**
 * Registers the corpus tasks the runs in `dirs` trained on: a run's stored selection (`--corpus`), as
 * it registered them, and the whole corpus when a run names corpus tasks without one (a transfer
 * experiment's meta-training). A directory without a store is left to the export to refuse.
 */
async function registerRunCorpusTasks(dirs: string[]): Promise<void> {
  const configs = dirs.filter((d) => existsSync(join(d, 'store.db'))).map((d) => storedConfig(d));
  const selections = configs.flatMap((c) => c?.corpus ?? []);
  if (selections.length) await registerCorpusSelection(selections);
  const known = new Set(listTasks().map((t) => t.brief.id));
  if (configs.some((c) => c?.tasks?.some((t) => t.startsWith('corpus-') && !known.has(t)))) await registerCorpusTasks();
}

/** `rrl export sft`: the best jobs of each task of a split as SFT data, with a summary line per task. */
async function exportSftData(runDirs: string[], o: FlagValues<typeof SFT_FLAGS>): Promise<void> {
  const split = oneOf('--split', SPLITS, o.split);
  await useTaskDir(o.taskDir);
  await registerRunCorpusTasks(runDirs.map((d) => resolve(d)));
  const r = exportSft(
    runDirs.map((d) => resolve(d)),
    { out: resolve(o.out), perTask: o.perTask, minMargin: o.minMargin, split, docChars: o.docChars },
  );
  for (const t of r.tasks) console.error(summaryLine(t));
  console.error(`${r.rows} row(s) written to ${r.path}`);
}

/** `rrl export tensorboard`: the run's scalars as TensorBoard event files. */
function exportTensorboardFiles(runDir: string, o: FlagValues<typeof TENSORBOARD_FLAGS>): void {
  const r = exportTensorboard(resolve(runDir), resolve(o.out));
  console.error(`${r.scalars} scalar(s) in ${r.files} event file(s) under ${r.out}; view with: tensorboard --logdir ${r.out}`);
}

/** Registers `rrl export` and its subcommands on `program`. */
export function registerExportCommand(program: Command): void {
  const exporter = program.command('export').description("export a run's records or its model");
  const grpo = exporter
    .command('grpo')
    .argument('<run>', 'run directory')
    .description(
      "the LLM agent's proposals on the tasks of a split (train by default) as GRPO data: prompt messages, completion, reward, advantage, group " +
        "and job ids, the task's split",
    );
  addFlags(grpo, GRPO_FLAGS).action(exportGrpoData);
  const sft = exporter
    .command('sft')
    .argument('<runs...>', 'run directories (rrl train or rrl serve runs)')
    .description("the best jobs of each train task as supervised fine-tuning data: (prompt, merge patch over the baseline) in TRL's conversational format");
  addFlags(sft, SFT_FLAGS).action(exportSftData);
  const tensorboard = exporter
    .command('tensorboard')
    .argument('<run>', 'run directory')
    .description("the run's scalars as TensorBoard event files: per iteration (run/), per task (tasks/TASK/), per job (jobs/jNNNNN/)");
  addFlags(tensorboard, TENSORBOARD_FLAGS).action(exportTensorboardFiles);
  registerExportModel(exporter);
}

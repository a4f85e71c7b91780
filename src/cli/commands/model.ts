/** `rrl export model` and `rrl predict`: a run's model handed over as ONNX with its card, and run on new rows. */
import type { Command } from 'commander';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { csvFormatRows } from 'd3-dsv';
import { getPublicTask } from '../../tasks/briefs.js';
import { registerCorpusSelection } from '../../tasks/corpus/register.js';
import { Store } from '../../store/store.js';
import { type ExportSource, type TaskFacts, artifactSource, pickExport, pickSource, writeExport } from '../../outer/model-export.js';
import { loadExport, predictFile } from '../../outer/predict.js';
import { useTaskDir } from '../task-dir.js';
import { storedConfig } from '../stored-run.js';
import { num, progressBar } from '../format.js';
import { int } from '../flags/parse.js';
import { taskDirFlag } from '../flags/shared.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const EXPORT_FLAGS = flagTable({
  out: { flag: '--out <dir>', help: 'directory to write model.onnx, card.json and card.md into', required: true },
  task: { flag: '--task <id>', help: 'the task whose best model to export (needed when the run trained several)' },
  job: { flag: '--job <id>', help: 'export this job of the run instead of the best one', parse: int(1, Number.MAX_SAFE_INTEGER) },
  taskDir: taskDirFlag(),
});

const PREDICT_FLAGS = flagTable({
  data: { flag: '--data <file>', help: 'the rows to predict (.csv, .jsonl or .parquet), with the columns the card names', required: true },
  out: { flag: '--out <file>', help: 'write the predictions here as CSV (default: standard output)' },
});

/** The task's public facts for the card, when it is registered here (a task file or corpus table may not be). */
function taskFacts(task: string): TaskFacts {
  try {
    const { brief } = getPublicTask(task);
    const variables = [...(brief.supervised?.features ?? []), ...brief.environment.observation];
    return { metric: brief.metric, title: brief.title, descriptions: Object.fromEntries(variables.map((v) => [v.name, v.description])) };
  } catch {
    return { metric: null, title: null, descriptions: {} };
  }
}

/** Where the model comes from: a run's best (or named) job, or a job's artifact directory. */
async function exportSource(path: string, o: FlagValues<typeof EXPORT_FLAGS>): Promise<ExportSource> {
  if (!existsSync(path)) throw new Error(`${path}: no such directory`);
  if (!existsSync(join(path, 'store.db'))) {
    if (o.job !== undefined || o.task !== undefined) throw new Error(`${path}: not a run directory (no store.db); --job and --task name a run's jobs`);
    return artifactSource(path);
  }
  const config = storedConfig(path);
  await useTaskDir(o.taskDir, config?.taskDir);
  if (config?.corpus?.length) await registerCorpusSelection(config.corpus);
  const store = new Store(path);
  try {
    const run = store.getRun();
    if (!run) throw new Error(`${path}: the store holds no run`);
    const pick = pickExport(store.jobs(run.id), { job: o.job, task: o.task });
    const fingerprint = store.taskFingerprints(run.id).get(pick.job.task)?.fingerprint ?? null;
    return pickSource(path, run.id, pick, fingerprint);
  } finally {
    store.close();
  }
}

/** `rrl export model`: writes the model, its card and the card for people; one line on what was exported. */
async function exportModel(from: string, o: FlagValues<typeof EXPORT_FLAGS>): Promise<void> {
  const src = await exportSource(resolve(from), o);
  const r = writeExport(src, taskFacts(src.task), resolve(o.out));
  const s = r.card.score;
  const score = s.normalized === null ? 'no hidden score known' : `hidden score ${num(s.normalized)} ± ${num(s.stderr)}`;
  const conf = s.confirmed ? `confirmed ${num(s.confirmed.normalized)} over ${s.confirmed.seeds} seeds` : 'unconfirmed';
  console.error(`${src.task}: job ${r.card.job.id ?? '(artifact)'} exported to ${r.dir} (model.onnx, card.json, card.md): ${score}, ${conf}`);
}

/** `rrl predict`: the model's predictions for every row of the table, as CSV. */
async function predict(modelPath: string, o: FlagValues<typeof PREDICT_FLAGS>): Promise<void> {
  const model = await loadExport(resolve(modelPath));
  let bar: ReturnType<typeof progressBar> | null = null;
  try {
    const p = await predictFile(model, resolve(o.data), (done, total) => {
      if (total <= 10_000) return;
      bar ??= progressBar('predicting', total);
      bar.update(done, 'rows');
    });
    const text = `${csvFormatRows([p.header, ...p.rows])}\n`;
    if (o.out) {
      writeFileSync(resolve(o.out), text);
      console.error(`${p.rows.length} prediction(s) written to ${resolve(o.out)}`);
    } else process.stdout.write(text);
  } finally {
    (bar as ReturnType<typeof progressBar> | null)?.stop();
    await model.session.close();
  }
}

/** Registers `rrl export model` on the `export` command. */
export function registerExportModel(exporter: Command): void {
  const cmd = exporter
    .command('model')
    .argument('<run-or-job-dir>', "a run directory (its best confirmed model) or a job's artifact directory")
    .description("a trained model as ONNX with its whole preprocessing inside, plus its model card (the run's best confirmed job by default)");
  addFlags(cmd, EXPORT_FLAGS).action(exportModel);
}

/** Registers `rrl predict` on `program`. */
export function registerPredictCommand(program: Command): void {
  const cmd = program
    .command('predict')
    .argument('<model>', 'an export of `rrl export model`: its directory or its model.onnx (card.json beside it)')
    .description('predictions of an exported model for the rows of a table, through ONNX Runtime');
  addFlags(cmd, PREDICT_FLAGS).action(predict);
}

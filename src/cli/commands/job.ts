/** `rrl job baseline|run|exec`: single training jobs. */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { getPublicTask } from '../../tasks/briefs.js';
import { registerFamilyTaskId } from '../../tasks/families/index.js';
import { runJob } from '../../inner/train.js';
import { errorKind } from '../../inner/errors.js';
import { validateSpec } from '../../inner/spec-check.js';
import { dataForJob } from '../../outer/scoring/hidden-score.js';
import { Scorer } from '../../outer/scoring/scorer-pool.js';
import { NODE_JOB_USAGE } from '../../run/node-job.js';
import { SpecError } from '../../spec/validate.js';
import { num, progressBar, table } from '../format.js';
import { useTaskDir } from '../task-dir.js';
import { JSON_RESULT_FLAG, taskDirFlag } from '../flags/shared.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const BASELINE_FLAGS = flagTable({ taskDir: taskDirFlag() });

const RUN_FLAGS = flagTable({
  out: { flag: '--out <dir>', help: 'artifact directory', default: '' },
  json: JSON_RESULT_FLAG,
  taskDir: taskDirFlag(),
});

/** The job spec in the file `specPath` (parsed, not yet validated). */
function readSpec(specPath: string): unknown {
  try {
    return JSON.parse(readFileSync(specPath, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read the spec ${specPath}: ${(err as Error).message}`);
  }
}

/** `rrl job run`: trains one job here and scores it on the hidden evaluation. */
async function runOneJob(specPath: string, o: FlagValues<typeof RUN_FLAGS>): Promise<void> {
  await useTaskDir(o.taskDir);
  const raw = readSpec(specPath);
  const taskId = (raw as { task?: unknown })?.task;
  if (typeof taskId !== 'string') throw new SpecError([{ path: 'task', value: taskId, message: 'expected the id of a task (see `rrl tasks`)' }]);
  // A task drawn from a family is named by its id alone (the scorer thread draws it again).
  registerFamilyTaskId(taskId);
  const { brief } = getPublicTask(taskId);
  const outDir = resolve(o.out || join('runs', 'jobs', `${taskId}-${Date.now()}`));
  let bar: ReturnType<typeof progressBar> | null = null;
  let artifact;
  try {
    // Validated before the job's data is built: an unknown source id is invalid, not failed.
    const checked = validateSpec(raw, brief);
    if (!checked.ok) throw checked.error;
    artifact = await runJob(raw, brief, {
      outDir,
      data: dataForJob(taskId, checked.spec),
      onProgress: (steps, max) => {
        bar ??= progressBar('training', max);
        bar.update(steps, 'env steps');
      },
    });
  } catch (err) {
    if (o.json) {
      const status = err instanceof SpecError ? 'invalid' : 'failed';
      const kind = err instanceof SpecError ? 'invalid' : errorKind(err);
      console.log(JSON.stringify({ status, kind, error: (err as Error).message, score: null, cost: null, artifact: outDir }));
    }
    throw err;
  } finally {
    (bar as ReturnType<typeof progressBar> | null)?.stop();
  }
  // Scored in a scorer thread with its own time and heap limit, like every job of a run.
  const scorer = new Scorer({ workers: 1 });
  const scored = await scorer.score(taskId, outDir).finally(() => scorer.close());
  if (!scored.ok) {
    if (o.json) console.log(JSON.stringify({ status: 'failed', kind: scored.kind, error: scored.error, score: null, cost: null, artifact: outDir }));
    throw new Error(scored.error);
  }
  const { score } = scored;
  const out = {
    status: artifact.status,
    score,
    cost: { envSteps: artifact.cost.envSteps, examples: artifact.cost.examples, wallSeconds: artifact.cost.wallSeconds, cpuSeconds: artifact.cost.cpuSeconds },
    artifact: outDir,
  };
  if (o.json) console.log(JSON.stringify(out));
  else {
    const control = brief.kind === 'control';
    console.log(
      table(
        ['status', 'hidden raw', 'hidden normalised', '± std. error', control ? 'env steps' : 'examples', 'wall s', 'artifact'],
        [
          [
            out.status,
            num(score.raw, 3),
            num(score.normalized),
            score.stderr === null ? '—' : num(score.stderr),
            control ? out.cost.envSteps : out.cost.examples,
            num(out.cost.wallSeconds, 2),
            outDir,
          ],
        ],
      ),
    );
  }
}

/** Registers `rrl job` and its subcommands on `program`. */
export function registerJobCommand(program: Command): void {
  const job = program.command('job').description('single training jobs');
  const baseline = job
    .command('baseline')
    .argument('<task>', 'task id (a built-in, your own, or one drawn from a family: <family>-fam-<seed>-<n>)')
    .description("print the task's baseline spec (JSON)");
  addFlags(baseline, BASELINE_FLAGS).action(async (task: string, o: FlagValues<typeof BASELINE_FLAGS>) => {
    await useTaskDir(o.taskDir);
    registerFamilyTaskId(task);
    console.log(JSON.stringify(getPublicTask(task).baseline, null, 2));
  });
  const run = job.command('run').argument('<spec>', 'path to a job spec (JSON)');
  addFlags(run, RUN_FLAGS).description('train one job here and score it on the hidden evaluation').action(runOneJob);
  job
    .command('exec')
    .description(`node side of a cluster job: train a spec and write the artifact (never scores); ${NODE_JOB_USAGE.replace('usage: ', '')}`)
    .allowUnknownOption()
    .action(() => {
      // bin/rrl.js runs `rrl job exec` without loading this CLI (and the hidden evaluation with it).
      console.error(NODE_JOB_USAGE);
      process.exitCode = 2;
    });
}

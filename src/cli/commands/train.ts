/** `rrl train`: the outer loop, where the agent proposes jobs, they train, are scored, and the agent learns. */
import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { getPublicTask, listTasks } from '../../tasks/briefs.js';
import { registerFamilyTasks } from '../../tasks/families/index.js';
import { AGENTS, type LoopEvent, type TrainConfig, priorAgent, trainAgent } from '../../outer/loop.js';
import { REWARD_RULES } from '../../outer/reward.js';
import { makeExecutor } from '../../run/config.js';
import { num, progressBar, table } from '../format.js';
import { learningHeadline } from '../headline.js';
import { storedConfig } from '../stored-run.js';
import { useTaskDir } from '../task-dir.js';
import { EXECUTOR_FLAGS, executorConfigFrom } from '../flags/executor.js';
import { fidelityFlags, fidelityFrom } from '../flags/fidelity.js';
import { LLM_FLAGS, llmOptionsFrom } from '../flags/llm.js';
import { int, oneOf, real } from '../flags/parse.js';
import { FAMILY_HELP, JSON_RESULT_FLAG, REWARD_FLAG, corpusFlag, familyFlags, taskDirFlag } from '../flags/shared.js';
import { registerCorpusSelection } from '../../tasks/corpus/register.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

/**
 * `rrl train`'s defaults: the first run a newcomer sees. Two supervised tasks with room above their
 * baseline specs (cars-mpg's baseline trains on a shifted source, two-spirals' on a small net), whose
 * jobs train in well under a second, so 10 iterations of 8 proposals show the controller's jobs
 * getting better within a couple of minutes. What it measured, per seed and with the date and commit, is
 * in results/rrl-train.md; `npx rrl train --seed N` prints it again.
 */
const TRAIN_DEFAULTS = { tasks: 'cars-mpg,two-spirals', iterations: 10, group: 8 } as const;

/** `rrl train`'s flags, in the order of its help: the run's own, the LLM agent's, successive halving, the executor's. */
const TRAIN_FLAGS = flagTable({
  tasks: { flag: '--tasks <ids>', help: 'comma-separated task ids, or `train` / `held-out` for a whole split (with --family: none unless given)' },
  ...familyFlags(`${FAMILY_HELP}; their tasks join --tasks`, 'seed of the family draws (the same seed draws the same tasks)'),
  corpus: corpusFlag('real-table tasks that join --tasks'),
  tasksPerIteration: {
    flag: '--tasks-per-iteration <n>',
    help: "tasks each iteration takes, from a seeded shuffle of all the run's tasks (default: all of them)",
    parse: int(1, 100_000),
  },
  agent: {
    flag: '--agent <name>',
    help: 'controller | random | search | baseline | llm | optuna-tpe | optuna-cmaes | optuna-tpe-seeded | optuna-cmaes-seeded',
    default: 'controller',
  },
  prior: {
    flag: '--prior <path>',
    help:
      'start the controller from a saved prior instead of random weights: a prior file ' +
      '(the shipped one, priors/controller.json, meta-trained on real tables and the task families; ' +
      "priors/controller-families.json, on the families alone) or a transfer repetition's directory",
  },
  iterations: { flag: '--iterations <n>', help: 'outer iterations', parse: int(1, 10_000), default: TRAIN_DEFAULTS.iterations },
  group: { flag: '--group <g>', help: 'proposals per task per iteration', parse: int(1, 256), default: TRAIN_DEFAULTS.group },
  seed: { flag: '--seed <s>', help: 'seed of the run', parse: int(0, 2 ** 31 - 1), default: 1 },
  run: { flag: '--run <dir>', help: 'run directory (default: runs/<timestamp>)' },
  resume: { flag: '--resume [dir]', help: 'resume the run in this directory (or in --run)' },
  reward: REWARD_FLAG,
  // A blank value reads as 0 here (not in `rrl serve`), as it always has.
  costWeight: {
    flag: '--cost-weight <lambda>',
    help: 'weight of compute in the cost rule',
    parse: real(0, 10, { blankIsZero: true }),
    default: 0.5,
  },
  pruneFlat: { flag: '--prune-flat', help: "stop proposals' control jobs whose training returns stay flat past half their budget" },
  cache: {
    flag: '--cache <file>',
    help: "reuse results of identical (spec, seed) jobs from this SQLite file, shared between runs (default: the run's own store)",
    negate: 'train every job even when an identical one was recorded',
  },
  ...LLM_FLAGS,
  ...fidelityFlags('the run'),
  ...EXECUTOR_FLAGS,
  taskDir: taskDirFlag(),
  json: JSON_RESULT_FLAG,
});

/** The values of `rrl train`'s flags. */
type TrainFlags = FlagValues<typeof TRAIN_FLAGS>;

/** One line on what a run's proposals cost and gained (see outer/compute-report.ts). */
function computeLine(summary: Awaited<ReturnType<typeof trainAgent>>): string {
  const c = summary.compute;
  const how = summary.fidelity
    ? `successive halving (eta ${summary.fidelity.eta}, rung 0 at ${num(summary.fidelity.minShare, 3)} of the budget)`
    : 'every proposal at its full budget';
  const spent = [
    c.proposals.envSteps ? `${c.proposals.envSteps} env steps` : '',
    c.proposals.examples ? `${c.proposals.examples} examples` : '',
    `${num(c.proposals.cpuSeconds, 1)} CPU s`,
  ]
    .filter(Boolean)
    .join(', ');
  const per = c.perGain.cpuSeconds === null ? 'no held-out gain over the baselines' : `${num(c.perGain.cpuSeconds, 1)} CPU s per unit of gain`;
  return (
    `compute (${how}): ${c.proposals.jobs} jobs trained, ${spent}; held-out gain ${num(c.gain)} ` +
    `(best normalised score minus the baseline's, mean over tasks), ${num(c.confirmedGain)} confirmed on the harness's seeds; ${per}`
  );
}

/**
 * The run's family draws and tasks: on a new run, `--tasks` (a split name stands for its tasks) and
 * the `--family` draws and `--corpus` selections; on resume, those stored with the run (registered before any task id is
 * looked up). Every task is checked to exist.
 */
async function runTasks(
  o: TrainFlags,
  dir: string,
  resuming: boolean,
): Promise<{ families: NonNullable<TrainConfig['families']>; corpus: NonNullable<TrainConfig['corpus']>; tasks: string[] }> {
  const families = resuming ? (storedConfig(dir)?.families ?? []) : (o.family ?? []).map((d) => ({ ...d, seed: o.familySeed }));
  const corpus = resuming ? (storedConfig(dir)?.corpus ?? []) : (o.corpus ?? []);
  const drawn = [
    ...families.flatMap((d) => registerFamilyTasks(d.family, d.count, d.seed).map((t) => t.def.id)),
    ...(corpus.length ? (await registerCorpusSelection(corpus)).map((t) => t.id) : []),
  ];
  const named = (o.tasks ?? (drawn.length ? '' : TRAIN_DEFAULTS.tasks))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const ofSplit = (s: string): string[] =>
    listTasks()
      .filter((t) => t.brief.split === s)
      .map((t) => t.brief.id);
  const tasks = [...new Set([...named.flatMap((s) => (s === 'train' || s === 'held-out' ? ofSplit(s) : [s])), ...drawn])];
  for (const t of tasks) getPublicTask(t);
  return { families, corpus, tasks };
}

/** Prints the loop's events on stderr: phases, a progress bar of each iteration's jobs, each iteration's scores. */
function progressPrinter(): (e: LoopEvent) => void {
  let bar: ReturnType<typeof progressBar> | null = null;
  let barIteration = -2;
  return (e) => {
    if (e.type === 'phase') {
      bar?.stop();
      bar = null;
      process.stderr.write(`${e.message}\n`);
    } else if (e.type === 'jobs') {
      if (!bar || barIteration !== e.iteration) {
        bar?.stop();
        bar = progressBar(e.iteration < 0 ? 'baseline' : `iteration ${e.iteration + 1}`, e.total);
        barIteration = e.iteration;
      }
      bar.update(e.done, 'jobs');
    } else if (e.type === 'iteration') {
      bar?.stop();
      bar = null;
      const scores = `mean normalised score ${num(e.meanNormalized)}, best ${num(e.bestNormalized)}`;
      process.stderr.write(`iteration ${e.iteration + 1}: mean outer reward ${num(e.meanReward)}, ${scores}\n`);
    }
  };
}

/** Prints a finished run: one JSON object, or the table of its iterations and what it learnt and cost. */
function printSummary(summary: Awaited<ReturnType<typeof trainAgent>>, dir: string, json: boolean): void {
  if (json) {
    const iterations = summary.iterations.map((i) => ({ meanReward: i.meanReward, bestNormalized: i.bestNormalized, meanNormalized: i.meanNormalized }));
    console.log(JSON.stringify({ ...summary, iterations }));
    return;
  }
  console.log(
    table(
      ['iteration', 'mean outer reward', 'mean normalised score', 'best normalised score'],
      summary.iterations.map((i) => [i.iteration + 1, num(i.meanReward), num(i.meanNormalized), num(i.bestNormalized)]),
    ),
  );
  const sampled = Boolean(storedConfig(dir)?.tasksPerIteration);
  for (const line of learningHeadline(summary, summary.reward.rule, summary.reward.lambda, sampled)) console.log(line);
  console.log(computeLine(summary));
  console.log(`${summary.jobs} proposals in ${num(summary.timing.wallSeconds, 1)} s; run: ${summary.dir}`);
}

/** `rrl train`'s action: checks the flags, builds the run's configuration (none on resume) and runs the loop. */
async function runTraining(o: TrainFlags, cmd: Command): Promise<void> {
  const agent = oneOf('--agent', AGENTS, o.agent);
  const resumeDir = typeof o.resume === 'string' ? o.resume : o.resume ? o.run : undefined;
  if (o.resume && !resumeDir) throw new InvalidArgumentError('--resume needs a run directory: --resume DIR or --run DIR --resume');
  if (o.prior !== undefined && resumeDir) throw new InvalidArgumentError('--prior starts a new run; a resumed run continues from its own checkpoint');
  const dir = resolve(resumeDir ?? o.run ?? join('runs', new Date().toISOString().replace(/[:.]/g, '-')));
  const taskDir = await useTaskDir(o.taskDir, resumeDir ? storedConfig(dir)?.taskDir : undefined);
  const { families, corpus, tasks } = await runTasks(o, dir, Boolean(resumeDir));
  if (!resumeDir && tasks.length === 0) throw new InvalidArgumentError('no tasks: give --tasks IDS, --family NAME[:COUNT] or --corpus SPLIT[:N]');
  const reward = { rule: oneOf('--reward', REWARD_RULES, o.reward), lambda: o.costWeight };
  const fidelity = fidelityFrom(o);
  const llm = agent === 'llm' ? llmOptionsFrom(o, Boolean(resumeDir)) : undefined;
  let executorConfig = executorConfigFrom(o, cmd);
  const prior = o.prior === undefined ? undefined : resolve(o.prior);
  // Read and fitted to the controller before the run directory exists: a bad prior is a one-line error that leaves nothing behind.
  // The run then starts from this controller (the loop does not read the prior again).
  const fromPrior = prior ? await priorAgent({ agent, prior, seed: o.seed }) : undefined;
  const config: TrainConfig | null = resumeDir
    ? null
    : {
        tasks,
        agent,
        iterations: o.iterations,
        group: o.group,
        seed: o.seed,
        reward,
        pruneFlat: o.pruneFlat ?? false,
        ...(fidelity ? { fidelity } : {}),
        ...(families.length ? { families } : {}),
        ...(corpus.length ? { corpus } : {}),
        ...(o.tasksPerIteration ? { tasksPerIteration: o.tasksPerIteration } : {}),
        ...(taskDir ? { taskDir } : {}),
        ...(prior ? { prior } : {}),
        ...(llm ? { llm } : {}),
        ...(executorConfig ? { executor: executorConfig } : {}),
      };
  if (resumeDir) executorConfig = storedConfig(dir)?.executor;
  const executor = makeExecutor(executorConfig, { runDir: dir, workers: o.workers, memoryMb: o.jobMemory });
  if (executor.name !== 'local') {
    const partition = executorConfig?.kind === 'slurm' && executorConfig.partition ? ` (partition ${executorConfig.partition})` : '';
    process.stderr.write(`executor: ${executor.name}${partition}\n`);
  }
  const abort = new AbortController();
  const onSignal = (): void => {
    process.stderr.write(`\ninterrupted: cancelling running jobs; resume with \`rrl train --resume ${dir}\`\n`);
    abort.abort();
    executor.cancelAll('the run was interrupted');
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.stderr.write(`run directory: ${dir}\n`);
  try {
    const cache = o.cache === false ? null : typeof o.cache === 'string' ? resolve(o.cache) : undefined;
    let summary;
    try {
      const timeoutMs = o.jobTimeout ? o.jobTimeout * 1000 : undefined;
      summary = await trainAgent(dir, config, executor, {
        onEvent: progressPrinter(),
        signal: abort.signal,
        timeoutMs,
        cache,
        ...(fromPrior ? { agent: fromPrior } : {}),
      });
    } catch (err) {
      if (!abort.signal.aborted) throw err;
      process.exitCode = 130; // interrupted: the message above says how to resume
      return;
    }
    printSummary(summary, dir, Boolean(o.json));
  } finally {
    await executor.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (abort.signal.aborted) process.exitCode = 130;
}

/** Registers `rrl train` on `program`. */
export function registerTrainCommand(program: Command): void {
  const cmd = program.command('train').description('run the outer loop: the agent proposes jobs, they train, are scored, and the agent learns');
  addFlags(cmd, TRAIN_FLAGS).action(runTraining);
}

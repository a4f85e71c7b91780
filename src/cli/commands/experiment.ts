/** `rrl experiment transfer`: meta-train the controller (or start from a saved prior), then compare it with random and model-based search on held-out tasks. */
import { registerLlmTableCommand } from './llm-table.js';
import { type Command, InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeExecutor } from '../../run/config.js';
import { REWARD_RULES } from '../../outer/reward.js';
import { runTransfer, transferPreset } from '../../outer/experiment.js';
import { TRANSFER_PRESETS, type TransferOptions, type TransferPresetName, corpusPreset } from '../../outer/transfer-options.js';
import { EXECUTOR_FLAGS, executorConfigFrom } from '../flags/executor.js';
import { progressBar } from '../format.js';
import { useTaskDir } from '../task-dir.js';
import { fidelityFlags, fidelityFrom } from '../flags/fidelity.js';
import { int, oneOf, real } from '../flags/parse.js';
import { JSON_RESULT_FLAG, TASK_DIR_HELP, taskDirFlag } from '../flags/shared.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

/** `rrl experiment transfer`'s flags, in the order of its help. */
const TRANSFER_FLAGS = flagTable({
  preset: {
    flag: '--preset <name>',
    help:
      'quick (no meta-training: the families prior, priors/controller-families.json; 3 tasks per held-out family, compared with ' +
      'random search only; a few minutes on 2 cores) | full (meta-trains on 30 tasks per train family, 20 iterations ' +
      'of 12; 6 per held-out family, every method) | corpus-quick (the shipped prior, priors/controller.json, on 2 tasks per held-out corpus ' +
      'package, against random search) | corpus (meta-trains on 8 tasks per train corpus package and 30 per train family; ' +
      "8 tasks per held-out package against random search, Optuna's seeded TPE and CMA-ES, the baseline spec and the " +
      "families prior's zero-shot job); the corpus presets need python/fetch-corpus.sh",
    default: 'quick',
  },
  on: {
    flag: '--on <packages>',
    help: 'corpus presets: compare on the held-out packages (default; run once, at the end) or the validation packages (where every choice is made)',
  },
  families: {
    flag: '--no-families',
    help: 'corpus preset: meta-train on the corpus train packages alone, without the generated task families',
  },
  tasksPerIteration: {
    flag: '--tasks-per-iteration <n>',
    help: "train tasks each meta-training iteration takes (default: the preset's)",
    parse: int(1, 100_000),
  },
  iterations: { flag: '--iterations <n>', help: "meta-training iterations (default: the preset's)", parse: int(1, 10_000) },
  group: { flag: '--group <g>', help: "proposals per task per meta-training iteration (default: the preset's)", parse: int(2, 256) },
  seed: { flag: '--seed <s>', help: 'seed (the first one, with --seeds)', parse: int(0, 2 ** 31 - 1) },
  seeds: {
    flag: '--seeds <n>',
    help: 'independent repetitions with seeds S, S+1, …; the report gives means ± standard deviations',
    parse: int(1, 100),
  },
  secrets: {
    flag: '--secrets <n>',
    help:
      "evaluation secrets: the installation's and n−1 derived from it, each with every seed (held-out episode seeds " +
      "and test splits change with the secret); the report gives each secret's verdicts",
    parse: int(1, 16),
  },
  anchor: {
    flag: '--anchor <logits>',
    help: "the controller's initial lean to each task's baseline spec, in logits per head (0: none; it is learned either way)",
    parse: real(0, 20),
  },
  robust: {
    flag: '--robust <rate>',
    help:
      "family-robust meta-training: each train family's weight in the controller's updates follows exp(−rate × its " +
      'mean reward), so the families it does worst on count most (0: every task alike; default 1)',
    parse: real(0, 20),
  },
  compare: {
    flag: '--compare <set>',
    help:
      'the held-out comparison: all (every method: the controller frozen and adapting, random search, the model-based ' +
      "search, Optuna's samplers) | random (the controller frozen and random search only, about a fifth of the jobs) " +
      "(default: the preset's: full all, quick random)",
  },
  prior: {
    flag: '--prior <path>',
    help:
      'start from a saved controller prior instead of meta-training: a prior file, or the directory of an earlier ' +
      "experiment's repetition (its prior.json) | none: meta-train (default: the preset's: quick the families prior, " +
      'corpus-quick the shipped prior, full and corpus none)',
  },
  init: {
    flag: '--init <path>',
    help: "meta-train starting from a saved prior's weights (a prior file or a repetition's directory) instead of random ones",
  },
  confirmPicks: {
    flag: '--no-confirm-picks',
    help:
      "compare on single scores only: by default each compared row's pick (its best of 16, random search's best of 4, " +
      "the zero-shot spec) is also trained again on the harness's confirmation seeds, and the report compares the " +
      'means as well (about a third more held-out compute in the full preset, half in the quick one)',
  },
  reward: { flag: '--reward <rule>', help: 'outer reward rule of meta-training: improvement | best | cost (default: improvement)' },
  pruneFlat: { flag: '--prune-flat', help: 'stop meta-training control jobs whose training returns stay flat past half their budget' },
  ...fidelityFlags('meta-training (the held-out comparisons stay at full budget)'),
  dir: { flag: '--dir <dir>', help: 'where the runs, tables and plots go (default: runs/transfer-<timestamp>)' },
  ...EXECUTOR_FLAGS,
  taskDir: taskDirFlag(`${TASK_DIR_HELP}; each joins the side its file names (experiments: train | held-out)`),
  json: JSON_RESULT_FLAG,
});

/** The values of `rrl experiment transfer`'s flags. */
type TransferFlags = FlagValues<typeof TRANSFER_FLAGS>;

/** The experiment's settings: `preset`'s (read after the user's tasks are registered), with what the flags give instead. */
function transferOptions(preset: TransferPresetName, o: TransferFlags): TransferOptions {
  const on = o.on === undefined ? undefined : oneOf('--on', ['held-out', 'validation'] as const, o.on);
  if ((on || !o.families) && !preset.startsWith('corpus'))
    throw new InvalidArgumentError(`--on and --no-families are for the corpus presets, not --preset ${preset}`);
  const options = preset === 'corpus' || preset === 'corpus-quick' ? corpusPreset(preset, on) : transferPreset(preset);
  if (!o.families) options.families = [];
  if (o.iterations) options.iterations = o.iterations;
  if (o.group) options.group = o.group;
  if (o.tasksPerIteration) options.tasksPerIteration = o.tasksPerIteration;
  if (o.seed !== undefined) options.seed = o.seed;
  if (o.seeds !== undefined) options.seeds = o.seeds;
  if (o.secrets !== undefined) options.secrets = o.secrets;
  if (o.pruneFlat) options.pruneFlat = true;
  if (o.anchor !== undefined) options.anchor = o.anchor;
  if (o.robust !== undefined) options.robust = o.robust;
  if (o.prior !== undefined) options.prior = o.prior === 'none' ? null : resolve(o.prior);
  if (o.init !== undefined) options.init = resolve(o.init);
  if (o.compare !== undefined) options.compare = oneOf('--compare', ['all', 'random', 'corpus'] as const, o.compare);
  if (!o.confirmPicks) options.confirmPicks = false;
  const fidelity = fidelityFrom(o);
  if (fidelity) options.fidelity = fidelity;
  if (o.reward !== undefined) options.reward = { rule: oneOf('--reward', REWARD_RULES, o.reward), lambda: options.reward?.lambda ?? 0.5 };
  // A run from a prior does not meta-train: a meta-training setting would be silently ignored.
  const metaFlags = {
    '--iterations': o.iterations,
    '--group': o.group,
    '--tasks-per-iteration': o.tasksPerIteration,
    '--reward': o.reward,
    '--anchor': o.anchor,
    '--robust': o.robust,
    '--prune-flat': o.pruneFlat,
    '--fidelity': fidelity,
    '--init': o.init,
  };
  const ignored = Object.entries(metaFlags)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
  if (options.prior && ignored.length) {
    throw new InvalidArgumentError(
      `${ignored.join(', ')} set meta-training, which a run from a prior (${options.prior}) does not do; add --prior none to meta-train`,
    );
  }
  return options;
}

/** The experiment's events on stderr: phases, and a progress bar of each stage's iteration's jobs. */
function progressPrinter(): { onEvent: Parameters<typeof runTransfer>[3]; stop(): void } {
  let bar: ReturnType<typeof progressBar> | null = null;
  let barKey = '';
  return {
    onEvent: (e) => {
      if (e.type === 'phase') {
        bar?.stop();
        bar = null;
        process.stderr.write(`${e.message}\n`);
      } else if (e.type === 'jobs') {
        const key = `${e.stage}/${e.iteration}`;
        if (!bar || key !== barKey) {
          bar?.stop();
          bar = progressBar(`${e.stage} ${e.iteration < 0 ? 'baseline' : `iteration ${e.iteration + 1}`}`, e.total);
          barKey = key;
        }
        bar.update(e.done, 'jobs');
      }
    },
    stop: () => bar?.stop(),
  };
}

/** `rrl experiment transfer`'s action: runs the experiment and prints its report (or its result as JSON). */
async function runTransferExperiment(o: TransferFlags, cmd: Command): Promise<void> {
  const preset = oneOf('--preset', TRANSFER_PRESETS, o.preset);
  await useTaskDir(o.taskDir);
  const options = transferOptions(preset, o);
  const dir = resolve(o.dir ?? join('runs', `transfer-${new Date().toISOString().replace(/[:.]/g, '-')}`));
  process.stderr.write(`experiment directory: ${dir}\n`);
  const executor = makeExecutor(executorConfigFrom(o, cmd), { runDir: dir, workers: o.workers, memoryMb: o.jobMemory });
  const progress = progressPrinter();
  try {
    const result = await runTransfer(dir, options, executor, progress.onEvent);
    progress.stop();
    for (const note of result.notes) process.stderr.write(`!! ${note}\n`);
    if (o.json) console.log(JSON.stringify(result));
    else {
      console.log(readFileSync(result.files.markdown, 'utf8'));
      console.log(`tables and plots: ${result.files.markdown}, ${result.files.json}, ${result.files.curveSvg}, ${result.files.comparisonSvg}`);
    }
  } finally {
    await executor.close();
  }
}

/** Registers `rrl experiment` and its subcommands on `program`. */
export function registerExperimentCommand(program: Command): void {
  const experiment = program.command('experiment').description('experiments on the trainer agent');
  const transfer = experiment
    .command('transfer')
    .description(
      'meta-train the controller on the train tasks (or start from a saved prior), then compare it with random and model-based search on the held-out tasks',
    );
  addFlags(transfer, TRANSFER_FLAGS).action(runTransferExperiment);
  registerLlmTableCommand(experiment);
}

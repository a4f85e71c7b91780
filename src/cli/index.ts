/** The `rrl` command line: the program, each command registered from its own file under commands/. */
import { Command } from 'commander';
import { SpecError, formatIssues } from '../spec/validate.js';
import { TaskDirError } from '../tasks/file/register.js';
import { registerTasksCommand } from './commands/tasks.js';
import { registerTaskCommand } from './commands/task.js';
import { registerSpecCommand } from './commands/spec.js';
import { registerJobCommand } from './commands/job.js';
import { registerTrainCommand } from './commands/train.js';
import { registerServeCommand } from './commands/serve.js';
import { registerPromptCommand } from './commands/prompt.js';
import { registerSpaceCommand } from './commands/space.js';
import { registerExportCommand } from './commands/export.js';
import { registerPredictCommand } from './commands/model.js';
import { registerDashboardCommand } from './commands/dashboard.js';
import { registerExperimentCommand } from './commands/experiment.js';
import { registerCorpusCommand } from './commands/corpus.js';

const program = new Command();
program.name('rrl').description('recursive-rl: a trainer agent that learns, by RL, to write training jobs').showHelpAfterError();
// In the order `rrl --help` lists them.
for (const register of [
  registerTasksCommand,
  registerTaskCommand,
  registerSpecCommand,
  registerJobCommand,
  registerTrainCommand,
  registerServeCommand,
  registerPromptCommand,
  registerSpaceCommand,
  registerExportCommand,
  registerPredictCommand,
  registerDashboardCommand,
  registerExperimentCommand,
  registerCorpusCommand,
]) {
  register(program);
}

program.parseAsync(process.argv).catch((err: Error) => {
  if (err instanceof SpecError) {
    console.error(`rrl: invalid job spec:\n${err.issues.map((i) => `  - ${formatIssues([i])}`).join('\n')}`);
  } else if (err instanceof TaskDirError) {
    console.error(`rrl: task files with problems (check one with \`rrl task validate FILE\`):\n${err.problems.map((p) => `  - ${p}`).join('\n')}`);
  } else console.error(`rrl: ${err.message}`);
  process.exitCode = process.exitCode || 1;
});

/** `rrl task schema|new|validate`: the user's own task files (see docs/tasks-own.md). */
import { type Command, InvalidArgumentError } from 'commander';
import { relative, resolve } from 'node:path';
import { TaskFileError, loadTaskFile } from '../../tasks/file/load.js';
import { taskFileJsonSchema } from '../../tasks/file/schema.js';
import { newTaskFromData, newTaskFromGymnasium } from '../../tasks/file/new.js';
import { taskDirFlag } from '../flags/shared.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const NEW_FLAGS = flagTable({
  data: { flag: '--data <file>', help: 'a data file: .csv, .jsonl or .parquet' },
  target: { flag: '--target <column>', help: 'the column to predict' },
  type: { flag: '--type <type>', help: 'classification | regression (default: guessed from the target column)' },
  gymnasium: { flag: '--gymnasium <id>', help: 'a registered Gymnasium environment id, e.g. CartPole-v1' },
  id: { flag: '--id <id>', help: 'the task id (default: from the file name or environment id)' },
  out: { flag: '--out <file>', help: 'where the task file goes (default: tasks/<id>.json)' },
});

const VALIDATE_FLAGS = flagTable({ taskDir: taskDirFlag("the task directory their data must stay in (default: each file's folder)") });

/** A path as the user would type it from here. */
function relativePath(p: string): string {
  const r = relative(process.cwd(), p);
  return r === '' || r.startsWith('..') ? p : r;
}

/** `rrl task new`: writes a starting task file from a data file or a Gymnasium environment. */
async function newTask(o: FlagValues<typeof NEW_FLAGS>): Promise<void> {
  if (o.type !== undefined && o.type !== 'classification' && o.type !== 'regression') {
    throw new InvalidArgumentError(`--type must be classification or regression, got "${o.type}"`);
  }
  if (o.gymnasium && o.data) throw new InvalidArgumentError('give either --data FILE --target COLUMN or --gymnasium ID, not both');
  let r;
  if (o.gymnasium) r = newTaskFromGymnasium({ gymnasium: o.gymnasium, out: o.out, id: o.id });
  else {
    if (!o.data || !o.target) throw new InvalidArgumentError('rrl task new needs --data FILE --target COLUMN, or --gymnasium ID');
    r = await newTaskFromData({ data: o.data, target: o.target, out: o.out, id: o.id, type: o.type });
  }
  console.log(`wrote ${relativePath(r.out)}`);
  for (const n of r.notes) console.log(`  ${n}`);
}

/** `rrl task validate`: one line per problem of each file, each naming the field; exit code 1 when any has one. */
async function validateTaskFiles(files: string[], o: FlagValues<typeof VALIDATE_FLAGS>): Promise<void> {
  let failed = 0;
  for (const f of files) {
    try {
      const t = await loadTaskFile(resolve(f), o.taskDir ? resolve(o.taskDir) : undefined);
      console.log(`ok ${f}: task ${t.task.id}`);
      for (const n of t.notes) console.log(`  ${n}`);
    } catch (err) {
      failed++;
      if (err instanceof TaskFileError) for (const p of err.problems) console.error(`${f}: ${p}`);
      else console.error(`${f}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (failed) process.exitCode = 1;
}

/** Registers `rrl task` and its subcommands on `program`. */
export function registerTaskCommand(program: Command): void {
  const task = program.command('task').description('your own tasks: task files (see docs/tasks-own.md)');
  task
    .command('schema')
    .description('print the JSON Schema of task files')
    .action(() => {
      console.log(JSON.stringify(taskFileJsonSchema(), null, 2));
    });
  const create = task
    .command('new')
    .description('write a starting task file from a data file (--data FILE --target COLUMN) or a Gymnasium environment (--gymnasium ID)');
  addFlags(create, NEW_FLAGS).action(newTask);
  const validate = task.command('validate').argument('<file...>', 'task files').description('check task files: one line per problem, each naming the field');
  addFlags(validate, VALIDATE_FLAGS).action(validateTaskFiles);
}

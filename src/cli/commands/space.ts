/** `rrl space`: the design space the embedded agents and the optimisers choose from, as JSON. */
import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { getPublicTask, listTasks } from '../../tasks/briefs.js';
import { registerFamilyTaskId } from '../../tasks/families/index.js';
import { HEAD_NAMES, LOG_SPAN, describeSpace } from '../../outer/agents/space.js';
import { useTaskDir } from '../task-dir.js';
import { taskDirFlag } from '../flags/shared.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const SPACE_FLAGS = flagTable({
  task: { flag: '--task <id>', help: "one task's space (a family task id too); without it, every listed task's" },
  out: { flag: '--out <file>', help: 'write the JSON to this file instead of printing it' },
  taskDir: taskDirFlag(),
});

/** The description of one task, or of every listed task with the learning agent's output slots. */
function spaceJson(task: string | undefined): unknown {
  if (task) {
    registerFamilyTaskId(task);
    const { brief, baseline } = getPublicTask(task);
    return describeSpace(brief, baseline);
  }
  return { logSpan: LOG_SPAN, slots: HEAD_NAMES, tasks: listTasks().map(({ brief, baseline }) => describeSpace(brief, baseline)) };
}

/** `rrl space`'s action: prints (or writes) the description. */
async function printSpace(o: FlagValues<typeof SPACE_FLAGS>): Promise<void> {
  await useTaskDir(o.taskDir);
  const text = `${JSON.stringify(spaceJson(o.task), null, 2)}\n`;
  if (o.out) writeFileSync(o.out, text);
  else process.stdout.write(text);
}

/** Registers `rrl space` on `program`. */
export function registerSpaceCommand(program: Command): void {
  const cmd = program.command('space').description('print the design space (each head: its spec path, options, kind, range, log scale) as JSON');
  addFlags(cmd, SPACE_FLAGS).action(printSpace);
}

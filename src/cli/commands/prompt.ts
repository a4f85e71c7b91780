/** `rrl prompt TASK`: the LLM agent's prompt for a task (the chat messages it sends). */
import { type Command, InvalidArgumentError } from 'commander';
import { resolve } from 'node:path';
import { getPublicTask, listTasks } from '../../tasks/briefs.js';
import { registerCorpusTasks } from '../../tasks/corpus/register.js';
import { DOC_CHARS, MAX_DOC_CHARS } from '../../outer/agents/patch-prompt.js';
import { registerFamilyTaskId } from '../../tasks/families/index.js';
import { buildPrompt } from '../../outer/agents/prompt.js';
import { LLM_DEFAULTS } from '../../outer/agents/llm/options.js';
import { Store } from '../../store/store.js';
import { useTaskDir } from '../task-dir.js';
import { int } from '../flags/parse.js';
import { taskDirFlag } from '../flags/shared.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const PROMPT_FLAGS = flagTable({
  run: { flag: '--run <dir>', help: "include this run's earlier jobs on the task with their rewards" },
  llmHistory: { flag: '--llm-history <k>', help: 'how many earlier jobs to show', parse: int(0, 1000), default: LLM_DEFAULTS.historyLimit },
  compact: { flag: '--compact', help: 'the compact form for small models: one valid spec to start from instead of the field list' },
  patch: { flag: '--patch', help: 'the patch form for small models: the current job, what may change, and a JSON merge patch asked for' },
  docChars: {
    flag: '--doc-chars <n>',
    help: `characters of the task's documentation the patch form shows (0: none, the ablation: names, kinds, metric and caps kept)`,
    parse: int(0, MAX_DOC_CHARS),
    default: DOC_CHARS,
  },
  json: { flag: '--json', help: 'print the messages as a JSON array' },
  taskDir: taskDirFlag(),
});

const hasTask = (id: string): boolean => listTasks().some((t) => t.brief.id === id);

/** The run's earlier proposals on `task`, with their rewards, as the prompt shows them. */
function history(runDir: string, task: string): { spec: unknown; reward: number | null; status?: string; error?: string | null }[] {
  const store = new Store(resolve(runDir));
  try {
    const run = store.getRun();
    if (!run) throw new Error(`no run in ${runDir}`);
    return store
      .jobs(run.id, { kind: 'proposal' })
      .filter((j) => j.task === task)
      .map((j) => ({ spec: j.spec, reward: j.reward, status: j.status, error: j.error }));
  } finally {
    store.close();
  }
}

/** `rrl prompt`'s action: prints the messages (as text, or as JSON). */
async function printPrompt(task: string, o: FlagValues<typeof PROMPT_FLAGS>): Promise<void> {
  if (o.compact && o.patch) throw new InvalidArgumentError('--compact and --patch are two forms; give one');
  await useTaskDir(o.taskDir);
  registerFamilyTaskId(task);
  if (task.startsWith('corpus-') && !hasTask(task)) await registerCorpusTasks();
  const { brief } = getPublicTask(task);
  const earlier = o.run ? history(o.run, task) : [];
  const form = o.compact || o.patch ? { compact: o.compact, patch: o.patch, example: getPublicTask(task).baseline } : {};
  const messages = buildPrompt(brief, { history: earlier, historyLimit: o.run ? o.llmHistory : 0, docChars: o.docChars, ...form });
  if (o.json) console.log(JSON.stringify(messages, null, 2));
  else console.log(messages.map((m) => `=== ${m.role} ===\n${m.content}`).join('\n\n'));
}

/** Registers `rrl prompt` on `program`. */
export function registerPromptCommand(program: Command): void {
  const cmd = program.command('prompt').argument('<task>', 'task id').description("print the LLM agent's prompt for a task (the chat messages it sends)");
  addFlags(cmd, PROMPT_FLAGS).action(printPrompt);
}

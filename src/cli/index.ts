/** The `rrl` command line. */
import { Command, InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { jobSpecJsonSchema } from '../spec/schema.js';
import { grammarSchema } from '../spec/grammar-schema.js';
import { listTasks, getPublicTask } from '../tasks/briefs.js';
import { runJob } from '../inner/train.js';
import { errorKind } from '../inner/limits.js';
import { validateSpec } from '../inner/validate.js';
import { dataForJob } from '../outer/scoring/hidden-score.js';
import { Scorer } from '../outer/scoring/scorer-pool.js';
import { LocalExecutor } from '../run/local.js';
import { type ExecutorConfig, type SlurmExecutorConfig, makeExecutor } from '../run/config.js';
import { NODE_JOB_USAGE } from '../run/node-job.js';
import { Store } from '../store/store.js';
import { AGENTS, type AgentName, type LoopEvent, type TrainConfig, train } from '../outer/loop.js';
import { REWARD_RULES, type RewardRuleName } from '../outer/reward.js';
import { runTransfer, transferPreset } from '../outer/experiment.js';
import { SpecError, formatIssues } from '../spec/validate.js';
import { buildPrompt } from '../outer/agents/prompt.js';
import { LLM_DEFAULTS, PROMPT_FORMS, type LlmOptions, type PromptForm } from '../outer/agents/llm/options.js';
import { EXPORT_FORMATS, type ExportFormat, exportGrpo } from '../outer/grpo-export.js';
import { SPLITS, type Split, exportSft, summaryLine } from '../outer/sft-export.js';
import { num, progressBar, table } from './format.js';
import { RewardService, type ServeConfig } from '../serve/service.js';
import { startServer } from '../serve/server.js';
import { tokenFromEnv } from '../serve/auth.js';
import { DOOR_DEFAULTS } from '../serve/front-door.js';
import { INTAKE_DEFAULTS } from '../serve/intake.js';
import { RunCatalog } from '../dashboard/catalog.js';
import { DEFAULT_MAX_STREAMS, startDashboard } from '../dashboard/server.js';
import { exportTensorboard } from '../dashboard/tensorboard.js';
import { learningHeadline } from './headline.js';
import { measureNoise, measuredNoise, noiseCell } from './noise.js';
import { TaskDirError, defaultTaskDir, registerTaskDir } from '../tasks/file/register.js';
import { TaskFileError, loadTaskFile } from '../tasks/file/load.js';
import { taskFileJsonSchema } from '../tasks/file/schema.js';
import { newTaskFromData, newTaskFromGymnasium } from '../tasks/file/new.js';
import { ASHA_DEFAULTS, type FidelityConfig, rungShares } from '../outer/fidelity.js';
import { FAMILIES, registerFamilyTasks } from '../tasks/families/index.js';

/** Parses `--min-share`: a fraction written `1/9` or a number, in (0, 1]. */
function share(v: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(v);
  const n = m ? Number(m[1]) / Number(m[2]) : v.trim() === '' ? NaN : Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new InvalidArgumentError(`--min-share must be a fraction in (0, 1] such as 1/9 or 0.25, got "${v}"`);
  return n;
}

/** This package's version (the OpenAPI document's). */
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function int(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer in [${min}, ${max}], got "${v}"`);
    return n;
  };
}

function real(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a number in [${min}, ${max}], got "${v}"`);
    return n;
  };
}

const TASK_DIR_HELP = "a directory of your own task files (*.json), next to the built-in tasks (default: ./tasks where it exists; see docs/tasks-own.md)";

/**
 * Registers the user's task directory: `flag`, else `stored` (the one a resumed run recorded),
 * else ./tasks where it exists. Returns its absolute path, or undefined when there is none.
 */
async function useTaskDir(flag?: string, stored?: string): Promise<string | undefined> {
  const dir = flag ?? stored ?? defaultTaskDir() ?? undefined;
  if (!dir) return undefined;
  await registerTaskDir(dir);
  return resolve(dir);
}

/** The executor flags shared by `rrl train` and `rrl serve`. */
interface ExecutorFlags {
  workers?: number;
  jobTimeout?: number;
  jobMemory: number;
  executor: string;
  partition?: string;
  account?: string;
  timeLimit?: number;
  gpus?: number;
  slurmArg?: string[];
  maxResubmits: number;
  slurmRest?: string;
  slurmTokenEnv?: string;
  pollInterval: number;
}

/** Adds the flags that say where and how jobs run (local worker threads or Slurm). */
function addExecutorOptions(cmd: Command): Command {
  return cmd
    .option('--workers <n>', 'worker threads (default: one per core)', int('--workers', 1, 256))
    .option('--job-timeout <seconds>', "per-job wall-clock limit (default: the task's cap)", int('--job-timeout', 1, 86_400))
    .option('--job-memory <mb>', 'per-job heap limit in MB', int('--job-memory', 64, 65_536), 2048)
    .option('--executor <kind>', 'where jobs run: local (worker threads) | slurm (batch jobs on a Slurm cluster)', 'local')
    .option('--partition <p>', 'slurm: partition')
    .option('--account <a>', 'slurm: account')
    .option('--time-limit <minutes>', "slurm: time limit per job (default: the job's wall-clock limit plus one minute)", int('--time-limit', 1, 525_600))
    .option('--gpus <n>', 'slurm: GPUs per job', int('--gpus', 0, 64))
    .option('--slurm-arg <arg>', 'slurm: an extra sbatch argument, e.g. --slurm-arg=--qos=short (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--max-resubmits <n>', 'slurm: submissions again after NODE_FAIL, PREEMPTED or BOOT_FAIL', int('--max-resubmits', 0, 100), 2)
    .option('--slurm-rest <url>', 'slurm: submit through slurmrestd at this URL instead of sbatch/squeue')
    .option('--slurm-token-env <var>', 'slurm: environment variable holding the JWT for slurmrestd (default: scontrol token)')
    .option('--poll-interval <ms>', 'slurm: how often the queue is polled', int('--poll-interval', 100, 600_000), 2000);
}

/** The executor a command's flags name (undefined: local worker threads). */
function executorConfigFrom(o: ExecutorFlags, cmd: Command): ExecutorConfig | undefined {
  if (o.executor !== 'local' && o.executor !== 'slurm') throw new InvalidArgumentError(`--executor must be local or slurm, got "${o.executor}"`);
  if (o.executor === 'slurm') {
    const slurm: SlurmExecutorConfig = { kind: 'slurm', extraArgs: o.slurmArg ?? [], maxResubmits: o.maxResubmits, pollMs: o.pollInterval };
    if (o.partition) slurm.partition = o.partition;
    if (o.account) slurm.account = o.account;
    if (o.timeLimit) slurm.timeLimitMinutes = o.timeLimit;
    if (o.gpus) slurm.gpus = o.gpus;
    if (cmd.getOptionValueSource('jobMemory') === 'cli') slurm.memoryMb = o.jobMemory;
    if (o.slurmRest) slurm.rest = { url: o.slurmRest, ...(o.slurmTokenEnv ? { tokenEnv: o.slurmTokenEnv } : {}) };
    return slurm;
  }
  return undefined;
}

/**
 * `rrl train`'s defaults: the first run a newcomer sees. Two supervised tasks with room above their
 * baseline specs (cars-mpg's baseline trains on a shifted source, two-spirals' on a small net), whose
 * jobs train in well under a second, so 10 iterations of 8 proposals show the controller's jobs
 * getting better (mean hidden score 0.53 → 0.78, 0.42 → 0.78, 0.48 → 0.71 over seeds 1–3, measured
 * 2026-12-01) in about a minute and a half.
 */
const TRAIN_DEFAULTS = { tasks: 'cars-mpg,two-spirals', iterations: 10, group: 8 } as const;

/** The successive-halving setting of `--fidelity`, `--eta` and `--min-share` (undefined: off). */
function fidelityFrom(o: { fidelity: string; eta: number; minShare: number }): FidelityConfig | undefined {
  if (o.fidelity !== 'none' && o.fidelity !== 'asha') throw new InvalidArgumentError(`--fidelity must be none or asha, got "${o.fidelity}"`);
  if (o.fidelity === 'none') return undefined;
  const f: FidelityConfig = { mode: 'asha', eta: o.eta, minShare: o.minShare };
  if (rungShares(f).length < 2) throw new InvalidArgumentError(`--min-share ${o.minShare} leaves a single rung: successive halving needs a share below 1`);
  return f;
}

/** Adds `--fidelity`, `--eta` and `--min-share` (successive halving within each group). */
function addFidelityOptions(cmd: Command, what: string): Command {
  return cmd
    .option('--fidelity <mode>', `none | asha: successive halving within each group of ${what} (every proposal first trains on --min-share of its budget, the best 1/eta go on at eta× the budget, up to the full budget; control rung jobs also stop when their training curve stays flat)`, 'none')
    .option('--eta <n>', 'asha: promotion factor (the top 1/eta of a rung go on at eta× the budget)', int('--eta', 2, 16), ASHA_DEFAULTS.eta)
    .option('--min-share <fraction>', 'asha: share of the budget at the lowest rung, e.g. 1/9', share, ASHA_DEFAULTS.minShare);
}

/** One line on what a run's proposals cost and gained (see outer/compute.ts). */
function computeLine(summary: Awaited<ReturnType<typeof train>>): string {
  const c = summary.compute;
  const how = summary.fidelity ? `successive halving (eta ${summary.fidelity.eta}, rung 0 at ${num(summary.fidelity.minShare, 3)} of the budget)` : 'every proposal at its full budget';
  const spent = [c.proposals.envSteps ? `${c.proposals.envSteps} env steps` : '', c.proposals.examples ? `${c.proposals.examples} examples` : '', `${num(c.proposals.cpuSeconds, 1)} CPU s`].filter(Boolean).join(', ');
  const per = c.perGain.cpuSeconds === null ? 'no held-out gain over the baselines' : `${num(c.perGain.cpuSeconds, 1)} CPU s per unit of gain`;
  return `compute (${how}): ${c.proposals.jobs} jobs trained, ${spent}; held-out gain ${num(c.gain)} (best normalised score minus the baseline's, mean over tasks); ${per}`;
}

/** `--family NAME[:COUNT]` (repeatable; COUNT defaults to 10): family draws, validated against the known families. */
function familyFlag(v: string, prev: { family: string; count: number }[] = []): { family: string; count: number }[] {
  const m = /^([a-z][a-z0-9-]*)(?::(\d+))?$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError(`--family takes NAME or NAME:COUNT, e.g. cartpole:20; got "${v}"`);
  if (!FAMILIES[m[1]]) throw new InvalidArgumentError(`unknown task family "${m[1]}"; known families: ${Object.keys(FAMILIES).join(', ')}`);
  const count = m[2] === undefined ? 10 : Number(m[2]);
  if (count < 1 || count > 10_000) throw new InvalidArgumentError(`--family ${m[1]}: COUNT must be 1 to 10000, got ${count}`);
  return [...prev, { family: m[1], count }];
}

const FAMILY_HELP = 'tasks drawn from a task family, NAME[:COUNT] (repeatable; COUNT 10 by default; `rrl tasks --families` lists them)';

const program = new Command();
program.name('rrl').description('recursive-rl: a trainer agent that learns, by RL, to write training jobs').showHelpAfterError();

program
  .command('tasks')
  .description('list the tasks')
  .option('--json', 'one JSON array on stdout')
  .option('--task-dir <dir>', TASK_DIR_HELP)
  .option('--family <name[:count]>', FAMILY_HELP, familyFlag)
  .option('--family-seed <s>', 'seed of the family draws', int('--family-seed', 0, 2 ** 31 - 1), 1)
  .option('--families', 'list the task families instead (name, kind, split, what varies)')
  .option('--measure-noise', "train every listed task's baseline spec on the harness's 5 seeds where the noise table has no record, then list")
  .option('--workers <n>', 'worker threads for --measure-noise (default: one per core)', int('--workers', 1, 256))
  .action(async (o: { json?: boolean; taskDir?: string; family?: { family: string; count: number }[]; familySeed: number; families?: boolean; measureNoise?: boolean; workers?: number }) => {
    if (o.families) {
      const fams = Object.values(FAMILIES).map((f) => ({ name: f.name, kind: f.kind, split: f.split, description: f.description }));
      if (o.json) console.log(JSON.stringify(fams));
      else console.log(table(['family', 'kind', 'split', 'what varies'], fams.map((f) => [f.name, f.kind, f.split, f.description])));
      return;
    }
    await useTaskDir(o.taskDir);
    for (const d of o.family ?? []) registerFamilyTasks(d.family, d.count, o.familySeed);
    if (o.measureNoise) {
      const missing = listTasks().map((t) => t.brief.id).filter((id) => !measuredNoise().records.has(id));
      if (missing.length) await measureNoise(missing, o.workers, (line) => process.stderr.write(`${line}\n`));
    }
    const { records, problem } = measuredNoise();
    if (problem) process.stderr.write(`${problem}\n`);
    const rows = listTasks().map(({ brief: b }) => {
      const n = records.get(b.id);
      return { id: b.id, family: b.family, kind: b.kind, split: b.split, data: b.data, noise: n ? { seeds: n.seeds, mean: n.mean, sd: n.sd, spread: n.spread, evalSe: n.evalSe } : null };
    });
    if (o.json) console.log(JSON.stringify(rows));
    else {
      console.log(table(['id', 'family', 'kind', 'split', 'data', 'title', 'training noise (baseline over harness seeds)'], listTasks().map(({ brief: b }) => [b.id, b.family, b.kind, b.split, b.data, b.title, noiseCell(records.get(b.id))])));
      if (rows.some((r) => !r.noise)) process.stderr.write('noise not measured yet for some tasks: `rrl tasks --measure-noise` measures it (every `rrl train` run also records what it measured)\n');
    }
  });

const taskCmd = program.command('task').description('your own tasks: task files (see docs/tasks-own.md)');
taskCmd
  .command('schema')
  .description('print the JSON Schema of task files')
  .action(() => {
    console.log(JSON.stringify(taskFileJsonSchema(), null, 2));
  });

taskCmd
  .command('new')
  .description('write a starting task file from a data file (--data FILE --target COLUMN) or a Gymnasium environment (--gymnasium ID)')
  .option('--data <file>', 'a data file: .csv, .jsonl or .parquet')
  .option('--target <column>', 'the column to predict')
  .option('--type <type>', 'classification | regression (default: guessed from the target column)')
  .option('--gymnasium <id>', 'a registered Gymnasium environment id, e.g. CartPole-v1')
  .option('--id <id>', 'the task id (default: from the file name or environment id)')
  .option('--out <file>', 'where the task file goes (default: tasks/<id>.json)')
  .action(async (o: { data?: string; target?: string; type?: string; gymnasium?: string; id?: string; out?: string }) => {
    if (o.type !== undefined && o.type !== 'classification' && o.type !== 'regression') throw new InvalidArgumentError(`--type must be classification or regression, got "${o.type}"`);
    if (o.gymnasium && o.data) throw new InvalidArgumentError('give either --data FILE --target COLUMN or --gymnasium ID, not both');
    let r;
    if (o.gymnasium) r = newTaskFromGymnasium({ gymnasium: o.gymnasium, out: o.out, id: o.id });
    else {
      if (!o.data || !o.target) throw new InvalidArgumentError('rrl task new needs --data FILE --target COLUMN, or --gymnasium ID');
      r = await newTaskFromData({ data: o.data, target: o.target, out: o.out, id: o.id, type: o.type as 'classification' | 'regression' | undefined });
    }
    console.log(`wrote ${relativePath(r.out)}`);
    for (const n of r.notes) console.log(`  ${n}`);
  });

taskCmd
  .command('validate')
  .argument('<file...>', 'task files')
  .description('check task files: one line per problem, each naming the field')
  .option('--task-dir <dir>', "the task directory their data must stay in (default: each file's folder)")
  .action(async (files: string[], o: { taskDir?: string }) => {
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
  });

program
  .command('spec')
  .description('the job spec schema')
  .option('--json-schema', 'print the JSON Schema the agent writes against (draft 2020-12)')
  .option('--grammar [task]', 'with --json-schema: the grammar form structured output sends (plain features; narrowed to TASK when given)')
  .action((o: { jsonSchema?: boolean; grammar?: string | boolean }) => {
    if (!o.jsonSchema) {
      console.error('use `rrl spec --json-schema` to print the job spec JSON Schema');
      process.exitCode = 2;
      return;
    }
    if (o.grammar === undefined) console.log(JSON.stringify(jobSpecJsonSchema(), null, 2));
    else console.log(JSON.stringify(grammarSchema(typeof o.grammar === 'string' ? getPublicTask(o.grammar).brief : undefined), null, 2));
  });

const job = program.command('job').description('single training jobs');
job
  .command('baseline')
  .argument('<task>', 'task id')
  .description("print the task's baseline spec (JSON)")
  .option('--task-dir <dir>', TASK_DIR_HELP)
  .action(async (task: string, o: { taskDir?: string }) => {
    await useTaskDir(o.taskDir);
    console.log(JSON.stringify(getPublicTask(task).baseline, null, 2));
  });

job
  .command('run')
  .argument('<spec>', 'path to a job spec (JSON)')
  .option('--out <dir>', 'artifact directory', '')
  .option('--json', 'one JSON object on stdout as the last line')
  .option('--task-dir <dir>', TASK_DIR_HELP)
  .description('train one job here and score it on the hidden evaluation')
  .action(async (specPath: string, o: { out: string; json?: boolean; taskDir?: string }) => {
    await useTaskDir(o.taskDir);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(specPath, 'utf8'));
    } catch (err) {
      throw new Error(`cannot read the spec ${specPath}: ${(err as Error).message}`);
    }
    const taskId = (raw as { task?: unknown })?.task;
    if (typeof taskId !== 'string') throw new SpecError([{ path: 'task', value: taskId, message: 'expected the id of a task (see `rrl tasks`)' }]);
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
      console.log(
        table(
          ['status', 'hidden raw', 'hidden normalised', '± std. error', brief.kind === 'control' ? 'env steps' : 'examples', 'wall s', 'artifact'],
          [[out.status, num(score.raw, 3), num(score.normalized), score.stderr === null ? '—' : num(score.stderr), brief.kind === 'control' ? out.cost.envSteps : out.cost.examples, num(out.cost.wallSeconds, 2), outDir]],
        ),
      );
    }
  });

job
  .command('exec')
  .description('node side of a cluster job: train a spec and write the artifact (never scores); ' + NODE_JOB_USAGE.replace('usage: ', ''))
  .allowUnknownOption()
  .action(() => {
    // bin/rrl.js runs `rrl job exec` without loading this CLI (and the hidden evaluation with it).
    console.error(NODE_JOB_USAGE);
    process.exitCode = 2;
  });

const trainCommand = program
  .command('train')
  .description('run the outer loop: the agent proposes jobs, they train, are scored, and the agent learns')
  .option('--tasks <ids>', 'comma-separated task ids, or `train` / `held-out` for a whole split (with --family: none unless given)')
  .option('--family <name[:count]>', `${FAMILY_HELP}; their tasks join --tasks`, familyFlag)
  .option('--family-seed <s>', 'seed of the family draws (the same seed draws the same tasks)', int('--family-seed', 0, 2 ** 31 - 1), 1)
  .option('--tasks-per-iteration <n>', 'tasks each iteration takes, from a seeded shuffle of all the run\'s tasks (default: all of them)', int('--tasks-per-iteration', 1, 100_000))
  .option('--agent <name>', 'controller | random | search | baseline | llm', 'controller')
  .option('--iterations <n>', 'outer iterations', int('--iterations', 1, 10_000), TRAIN_DEFAULTS.iterations)
  .option('--group <g>', 'proposals per task per iteration', int('--group', 1, 256), TRAIN_DEFAULTS.group)
  .option('--seed <s>', 'seed of the run', int('--seed', 0, 2 ** 31 - 1), 1)
  .option('--run <dir>', 'run directory (default: runs/<timestamp>)')
  .option('--resume [dir]', 'resume the run in this directory (or in --run)')
  .option('--reward <rule>', 'outer reward rule: improvement | best | cost', 'improvement')
  .option('--cost-weight <lambda>', 'weight of compute in the cost rule', (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0 || n > 10) throw new InvalidArgumentError(`--cost-weight must be a number in [0, 10], got "${v}"`);
    return n;
  }, 0.5)
  .option('--prune-flat', "stop proposals' control jobs whose training returns stay flat past half their budget")
  .option('--cache <file>', "reuse results of identical (spec, seed) jobs from this SQLite file, shared between runs (default: the run's own store)")
  .option('--no-cache', 'train every job even when an identical one was recorded')
  .option('--base-url <url>', 'llm: the OpenAI-compatible endpoint, e.g. http://localhost:8000/v1')
  .option('--model <name>', 'llm: the served model, e.g. Qwen/Qwen3.6-35B-A3B')
  .option('--api-key-env <var>', 'llm: environment variable holding the API key', LLM_DEFAULTS.apiKeyEnv)
  .option('--temperature <t>', 'llm: sampling temperature', real('--temperature', 0, 2), LLM_DEFAULTS.temperature)
  .option('--top-p <p>', 'llm: nucleus sampling top_p', real('--top-p', 0.01, 1), LLM_DEFAULTS.topP)
  .option('--max-tokens <n>', 'llm: completion token limit', int('--max-tokens', 16, 1_000_000), LLM_DEFAULTS.maxTokens)
  .option('--llm-n <n>', 'llm: completions per request (the group\'s next proposals use the extra ones)', int('--llm-n', 1, 16), LLM_DEFAULTS.n)
  .option('--llm-timeout <seconds>', 'llm: per-request timeout', real('--llm-timeout', 0.001, 3600), LLM_DEFAULTS.timeoutSeconds)
  .option('--llm-retries <n>', 'llm: retries of a request after a timeout, connection error, 429 or 5xx', int('--llm-retries', 0, 100), LLM_DEFAULTS.retries)
  .option('--llm-backoff <ms>', 'llm: first retry delay (doubled per retry, with jitter; Retry-After wins)', int('--llm-backoff', 0, 600_000), LLM_DEFAULTS.backoffMs)
  .option('--llm-history <k>', 'llm: earlier jobs on the task shown in the prompt with their rewards (0: none)', int('--llm-history', 0, 1000), LLM_DEFAULTS.historyLimit)
  .option('--no-llm-logprobs', 'llm: do not ask for token log-probabilities')
  .option('--no-structured-output', 'llm: do not send the JSON Schema as response_format')
  .option('--llm-prompt <form>', 'llm: auto (the full prompt unless it does not fit the model\'s context with --max-tokens to spare, then the compact one) | full | compact (one valid spec to edit, for small models)', LLM_DEFAULTS.promptForm)
  .option('--llm-context <tokens>', 'llm: the model\'s context in tokens (default: ask the server, or learn it when it refuses a prompt as too long)', int('--llm-context', 256, 10_000_000))
  .option('--llm-extra-body <json>', 'llm: JSON object merged into every request, e.g. \'{"chat_template_kwargs":{"enable_thinking":false}}\'', (v: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch (err) {
      throw new InvalidArgumentError(`--llm-extra-body must be a JSON object, got "${v}" (${(err as Error).message})`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError(`--llm-extra-body must be a JSON object, got "${v}"`);
    return parsed as Record<string, unknown>;
  })
  .option('--policy-update-command <cmd>', 'llm: shell command the agent runs in its update, between iterations, to train a LoRA adapter on the scored batch (env RRL_BATCH, RRL_ADAPTER_DIR, …)');
addExecutorOptions(addFidelityOptions(trainCommand, 'the run'))
  .option('--task-dir <dir>', TASK_DIR_HELP)
  .option('--json', 'one JSON object on stdout as the last line')
  .action(async (o: {
    taskDir?: string;
    baseUrl?: string;
    model?: string;
    apiKeyEnv: string;
    temperature: number;
    topP: number;
    maxTokens: number;
    llmN: number;
    llmTimeout: number;
    llmRetries: number;
    llmBackoff: number;
    llmHistory: number;
    llmLogprobs: boolean;
    structuredOutput: boolean;
    llmPrompt: string;
    llmContext?: number;
    policyUpdateCommand?: string;
    llmExtraBody?: Record<string, unknown>;
    pruneFlat?: boolean;
    fidelity: string;
    eta: number;
    minShare: number;
    reward: string;
    costWeight: number;
    cache: string | boolean;
    tasks?: string;
    family?: { family: string; count: number }[];
    familySeed: number;
    tasksPerIteration?: number;
    agent: string;
    iterations: number;
    group: number;
    seed: number;
    run?: string;
    resume?: string | boolean;
    json?: boolean;
  } & ExecutorFlags, cmd: Command) => {
    if (!(AGENTS as readonly string[]).includes(o.agent)) throw new InvalidArgumentError(`--agent must be one of ${AGENTS.join(', ')}, got "${o.agent}"`);
    const resumeDir = typeof o.resume === 'string' ? o.resume : o.resume ? o.run : undefined;
    if (o.resume && !resumeDir) throw new InvalidArgumentError('--resume needs a run directory: --resume DIR or --run DIR --resume');
    const dir = resolve(resumeDir ?? o.run ?? join('runs', new Date().toISOString().replace(/[:.]/g, '-')));
    const taskDir = await useTaskDir(o.taskDir, resumeDir ? storedTaskDir(dir) : undefined);
    // Family draws: the run's own, or on resume the stored ones (registered before any task id is looked up).
    const families = resumeDir ? storedConfig(dir)?.families ?? [] : (o.family ?? []).map((d) => ({ ...d, seed: o.familySeed }));
    const drawn = families.flatMap((d) => registerFamilyTasks(d.family, d.count, d.seed).map((t) => t.def.id));
    const named = (o.tasks ?? (drawn.length ? '' : TRAIN_DEFAULTS.tasks)).split(',').map((s) => s.trim()).filter(Boolean);
    const tasks = [...new Set([...named.flatMap((s) => (s === 'train' || s === 'held-out' ? listTasks().filter((t) => t.brief.split === s).map((t) => t.brief.id) : [s])), ...drawn])];
    for (const t of tasks) getPublicTask(t);
    if (!resumeDir && tasks.length === 0) throw new InvalidArgumentError('no tasks: give --tasks IDS or --family NAME[:COUNT]');
    if (!(REWARD_RULES as readonly string[]).includes(o.reward)) throw new InvalidArgumentError(`--reward must be one of ${REWARD_RULES.join(', ')}, got "${o.reward}"`);
    const reward = { rule: o.reward as RewardRuleName, lambda: o.costWeight };
    const fidelity = fidelityFrom(o);
    let llm: LlmOptions | undefined;
    if (o.agent === 'llm') {
      if (!resumeDir && (!o.baseUrl || !o.model)) throw new InvalidArgumentError('--agent llm needs --base-url URL and --model NAME');
      if (o.baseUrl && !/^https?:\/\//.test(o.baseUrl)) throw new InvalidArgumentError(`--base-url must start with http:// or https://, got "${o.baseUrl}"`);
      if (!(PROMPT_FORMS as readonly string[]).includes(o.llmPrompt)) throw new InvalidArgumentError(`--llm-prompt must be one of ${PROMPT_FORMS.join(', ')}, got "${o.llmPrompt}"`);
      llm = {
        baseUrl: o.baseUrl ?? '',
        model: o.model ?? '',
        apiKeyEnv: o.apiKeyEnv,
        temperature: o.temperature,
        topP: o.topP,
        maxTokens: o.maxTokens,
        n: o.llmN,
        timeoutSeconds: o.llmTimeout,
        retries: o.llmRetries,
        backoffMs: o.llmBackoff,
        historyLimit: o.llmHistory,
        logprobs: o.llmLogprobs,
        structuredOutput: o.structuredOutput,
        promptForm: o.llmPrompt as PromptForm,
        contextTokens: o.llmContext ?? null,
        policyUpdateCommand: o.policyUpdateCommand ?? null,
        extraBody: o.llmExtraBody ?? null,
      };
    }
    let executorConfig = executorConfigFrom(o, cmd);
    const config: TrainConfig | null = resumeDir
      ? null
      : {
          tasks,
          agent: o.agent as AgentName,
          iterations: o.iterations,
          group: o.group,
          seed: o.seed,
          reward,
          pruneFlat: o.pruneFlat ?? false,
          ...(fidelity ? { fidelity } : {}),
          ...(families.length ? { families } : {}),
          ...(o.tasksPerIteration ? { tasksPerIteration: o.tasksPerIteration } : {}),
          ...(taskDir ? { taskDir } : {}),
          ...(llm ? { llm } : {}),
          ...(executorConfig ? { executor: executorConfig } : {}),
        };
    if (resumeDir) executorConfig = storedExecutor(dir);
    const executor = makeExecutor(executorConfig, { runDir: dir, workers: o.workers, memoryMb: o.jobMemory });
    if (executor.name !== 'local') process.stderr.write(`executor: ${executor.name}${executorConfig?.kind === 'slurm' && executorConfig.partition ? ` (partition ${executorConfig.partition})` : ''}\n`);
    const abort = new AbortController();
    const onSignal = (): void => {
      process.stderr.write('\ninterrupted: cancelling running jobs; resume with `rrl train --resume ' + dir + '`\n');
      abort.abort();
      executor.cancelAll('the run was interrupted');
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    process.stderr.write(`run directory: ${dir}\n`);
    let bar: ReturnType<typeof progressBar> | null = null;
    let barIteration = -2;
    const onEvent = (e: LoopEvent): void => {
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
        process.stderr.write(`iteration ${e.iteration + 1}: mean outer reward ${num(e.meanReward)}, mean normalised score ${num(e.meanNormalized)}, best ${num(e.bestNormalized)}\n`);
      }
    };
    try {
      const cache = o.cache === false ? null : typeof o.cache === 'string' ? resolve(o.cache) : undefined;
      let summary;
      try {
        summary = await train(dir, config, executor, { onEvent, signal: abort.signal, timeoutMs: o.jobTimeout ? o.jobTimeout * 1000 : undefined, cache });
      } catch (err) {
        if (!abort.signal.aborted) throw err;
        process.exitCode = 130; // interrupted: the message above says how to resume
        return;
      }
      if (o.json) {
        console.log(JSON.stringify({ ...summary, iterations: summary.iterations.map((i) => ({ meanReward: i.meanReward, bestNormalized: i.bestNormalized, meanNormalized: i.meanNormalized })) }));
      } else {
        console.log(
          table(
            ['iteration', 'mean outer reward', 'mean normalised score', 'best normalised score'],
            summary.iterations.map((i) => [i.iteration + 1, num(i.meanReward), num(i.meanNormalized), num(i.bestNormalized)]),
          ),
        );
        for (const line of learningHeadline(summary, summary.reward.rule, summary.reward.lambda, Boolean(storedConfig(dir)?.tasksPerIteration))) console.log(line);
        console.log(computeLine(summary));
        console.log(`${summary.jobs} proposals in ${num(summary.timing.wallSeconds, 1)} s; run: ${summary.dir}`);
      }
    } finally {
      await executor.close();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (abort.signal.aborted) process.exitCode = 130;
  });

const serveCommand = program
  .command('serve')
  .description('the harness as a service: an RL framework posts completions, gets outer rewards (see docs/serve.md)')
  .option('--host <host>', 'address to listen on (beyond loopback a bearer token is required)', '127.0.0.1')
  .option('--port <port>', 'port (0: any free one)', int('--port', 0, 65_535), 8377)
  .option('--run <dir>', 'run directory (default: runs/serve-<timestamp>)')
  .option('--resume', 'continue the serve run in --run: keep its finished jobs, run its unfinished ones again')
  .option('--token-env <var>', 'environment variable holding the bearer token every request must carry')
  .option('--max-queue <n>', 'most jobs waiting or running; a request past it gets 429 with Retry-After', int('--max-queue', 1, 1_000_000), 256)
  .option('--max-completion-bytes <n>', 'completion bytes accepted per 10 s, invalid ones included; past it 429 with Retry-After', int('--max-completion-bytes', 1, 2 ** 40), INTAKE_DEFAULTS.completionBytes)
  .option('--max-connections <n>', 'most open connections; one past it gets 503 and is closed', int('--max-connections', 1, 100_000), DOOR_DEFAULTS.maxConnections)
  .option('--body-timeout <s>', 'seconds a client has to send a whole request (the answer may take longer)', int('--body-timeout', 1, 3600), DOOR_DEFAULTS.bodyTimeoutMs / 1000)
  .option('--reward <rule>', 'outer reward rule: improvement | best | cost', 'improvement')
  .option('--cost-weight <lambda>', 'weight of compute in the cost rule', real('--cost-weight', 0, 10), 0.5)
  .option('--cache <file>', "reuse results of identical jobs from this SQLite file (default: the run's own store)")
  .option('--no-cache', 'train every job even when an identical one was recorded')
  .option('--task-dir <dir>', TASK_DIR_HELP)
  .option('--family <name[:count]>', `${FAMILY_HELP}; served beside the built-in tasks (a held-out family's tasks are split held-out)`, familyFlag)
  .option('--family-seed <s>', 'seed of the family draws (the same seed draws the same tasks as `rrl train` and `rrl experiment transfer`)', int('--family-seed', 0, 2 ** 31 - 1), 1);
addExecutorOptions(serveCommand).action(async (o: ExecutorFlags & { taskDir?: string; family?: { family: string; count: number }[]; familySeed: number; host: string; port: number; run?: string; resume?: boolean; tokenEnv?: string; maxQueue: number; maxCompletionBytes: number; maxConnections: number; bodyTimeout: number; reward: string; costWeight: number; cache: string | boolean }, cmd: Command) => {
  if (!(REWARD_RULES as readonly string[]).includes(o.reward)) throw new InvalidArgumentError(`--reward must be one of ${REWARD_RULES.join(', ')}, got "${o.reward}"`);
  if (o.resume && !o.run) throw new InvalidArgumentError('--resume needs the run directory: --run DIR --resume');
  const token = tokenFromEnv(o.tokenEnv, o.host);
  await useTaskDir(o.taskDir);
  const dir = resolve(o.run ?? join('runs', `serve-${new Date().toISOString().replace(/[:.]/g, '-')}`));
  if (o.resume && o.family?.length) throw new InvalidArgumentError('--resume serves the family draws stored with the run; give no --family');
  // Family draws: stored with the run; RewardService.open registers them (the stored ones on resume).
  const families = (o.family ?? []).map((d) => ({ ...d, seed: o.familySeed }));
  let executorConfig = executorConfigFrom(o, cmd);
  const config: ServeConfig | null = o.resume
    ? null
    : { mode: 'serve', seed: 0, reward: { rule: o.reward as RewardRuleName, lambda: o.costWeight }, ...(families.length ? { families } : {}), ...(executorConfig ? { executor: executorConfig } : {}) };
  if (o.resume) executorConfig = storedExecutor(dir);
  const executor = makeExecutor(executorConfig, { runDir: dir, workers: o.workers, memoryMb: o.jobMemory });
  const log = (m: string): void => void process.stderr.write(`${m}\n`);
  let service: RewardService;
  try {
    service = RewardService.open(dir, config, executor, {
      maxQueue: o.maxQueue,
      completionBytes: o.maxCompletionBytes,
      cache: o.cache === false ? null : typeof o.cache === 'string' ? resolve(o.cache) : undefined,
      timeoutMs: o.jobTimeout ? o.jobTimeout * 1000 : undefined,
      log,
    });
  } catch (err) {
    await executor.close();
    throw err;
  }
  let server;
  try {
    server = await startServer(service, { host: o.host, port: o.port, token, version: PACKAGE_VERSION, maxConnections: o.maxConnections, bodyTimeoutMs: o.bodyTimeout * 1000 });
  } catch (err) {
    await service.close();
    await executor.close();
    throw err;
  }
  log(`run directory: ${dir}; executor: ${executor.name}`);
  console.log(`listening on ${server.url}`);
  const running = server;
  await new Promise<void>((done) => {
    const stop = (): void => {
      log('stopping: unfinished requests stay in the run; continue with `rrl serve --run ' + dir + ' --resume`');
      void running
        .close()
        .then(() => service.close())
        .then(() => executor.close())
        .finally(done);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
});

program
  .command('prompt')
  .argument('<task>', 'task id')
  .description("print the LLM agent's prompt for a task (the chat messages it sends)")
  .option('--run <dir>', "include this run's earlier jobs on the task with their rewards")
  .option('--llm-history <k>', 'how many earlier jobs to show', int('--llm-history', 0, 1000), LLM_DEFAULTS.historyLimit)
  .option('--compact', 'the compact form for small models: one valid spec to start from instead of the field list')
  .option('--patch', 'the patch form for small models: the current job, what may change, and a JSON merge patch asked for')
  .option('--json', 'print the messages as a JSON array')
  .option('--task-dir <dir>', TASK_DIR_HELP)
  .action(async (task: string, o: { run?: string; llmHistory: number; compact?: boolean; patch?: boolean; json?: boolean; taskDir?: string }) => {
    if (o.compact && o.patch) throw new InvalidArgumentError('--compact and --patch are two forms; give one');
    await useTaskDir(o.taskDir);
    const { brief } = getPublicTask(task);
    let history: { spec: unknown; reward: number | null; status?: string; error?: string | null }[] = [];
    if (o.run) {
      const store = new Store(resolve(o.run));
      try {
        const run = store.getRun();
        if (!run) throw new Error(`no run in ${o.run}`);
        history = store.jobs(run.id, { kind: 'proposal' }).filter((j) => j.task === task).map((j) => ({ spec: j.spec, reward: j.reward, status: j.status, error: j.error }));
      } finally {
        store.close();
      }
    }
    const messages = buildPrompt(brief, { history, historyLimit: o.run ? o.llmHistory : 0, ...(o.compact || o.patch ? { compact: o.compact, patch: o.patch, example: getPublicTask(task).baseline } : {}) });
    if (o.json) console.log(JSON.stringify(messages, null, 2));
    else console.log(messages.map((m) => `=== ${m.role} ===\n${m.content}`).join('\n\n'));
  });

const exporter = program.command('export').description("export a run's records");
exporter
  .command('grpo')
  .argument('<run>', 'run directory')
  .description("the LLM agent's proposals as GRPO data: prompt messages, completion, reward, advantage, group and job ids")
  .requiredOption('--format <format>', 'trl (JSON Lines) | verl (Parquet)')
  .requiredOption('--out <path>', 'output file')
  .option('--iteration <n>', 'only this iteration (1-based)', int('--iteration', 1, 1_000_000))
  .action((runDir: string, o: { format: string; out: string; iteration?: number }) => {
    if (!(EXPORT_FORMATS as readonly string[]).includes(o.format)) throw new InvalidArgumentError(`--format must be one of ${EXPORT_FORMATS.join(', ')}, got "${o.format}"`);
    const r = exportGrpo(resolve(runDir), { format: o.format as ExportFormat, out: resolve(o.out), iteration: o.iteration === undefined ? undefined : o.iteration - 1 });
    console.error(`${r.rows} row(s) written to ${r.path}`);
  });

exporter
  .command('sft')
  .argument('<runs...>', 'run directories (rrl train or rrl serve runs)')
  .description("the best jobs of each train task as supervised fine-tuning data: (prompt, merge patch over the baseline) in TRL's conversational format")
  .requiredOption('--out <file>', 'output file (JSON Lines)')
  .option('--per-task <k>', 'at most K distinct patches per task', int('--per-task', 1, 1_000_000), 4)
  .option('--min-margin <m>', "a floor on a kept job's lead over the reference (normalised units), beside the reward's noise rule", real('--min-margin', 0, 100), 0)
  .option('--split <split>', 'only tasks of this split: train | held-out | example', 'train')
  .option('--task-dir <dir>', TASK_DIR_HELP)
  .action(async (runDirs: string[], o: { out: string; perTask: number; minMargin: number; split: string; taskDir?: string }) => {
    if (!(SPLITS as readonly string[]).includes(o.split)) throw new InvalidArgumentError(`--split must be one of ${SPLITS.join(', ')}, got "${o.split}"`);
    await useTaskDir(o.taskDir);
    const r = exportSft(runDirs.map((d) => resolve(d)), { out: resolve(o.out), perTask: o.perTask, minMargin: o.minMargin, split: o.split as Split });
    for (const t of r.tasks) console.error(summaryLine(t));
    console.error(`${r.rows} row(s) written to ${r.path}`);
  });

exporter
  .command('tensorboard')
  .argument('<run>', 'run directory')
  .description("the run's scalars as TensorBoard event files: per iteration (run/), per task (tasks/TASK/), per job (jobs/jNNNNN/)")
  .requiredOption('--out <dir>', 'output directory (point `tensorboard --logdir` at it)')
  .action((runDir: string, o: { out: string }) => {
    const r = exportTensorboard(resolve(runDir), resolve(o.out));
    console.error(`${r.scalars} scalar(s) in ${r.files} event file(s) under ${r.out}; view with: tensorboard --logdir ${r.out}`);
  });

/** The task directory recorded with the run in `dir` (resume registers it again). */
function storedTaskDir(dir: string): string | undefined {
  return storedConfig(dir)?.taskDir;
}

/** The stored configuration of the run in `dir` (undefined when there is none). */
function storedConfig(dir: string): TrainConfig | undefined {
  const store = new Store(dir);
  try {
    return store.getRun()?.config as TrainConfig | undefined;
  } finally {
    store.close();
  }
}

/** A path as the user would type it from here. */
function relativePath(p: string): string {
  const r = relative(process.cwd(), p);
  return r === '' || r.startsWith('..') ? p : r;
}

/** The executor recorded with the run in `dir` (resume uses the same one). */
function storedExecutor(dir: string): ExecutorConfig | undefined {
  const store = new Store(dir);
  try {
    return (store.getRun()?.config as TrainConfig | undefined)?.executor;
  } finally {
    store.close();
  }
}

program
  .command('dashboard')
  .argument('[run-or-dir...]', 'run directories, or directories holding runs (searched 3 levels deep)', ['runs'])
  .description('a read-only web UI over runs, live while rrl train or rrl serve writes them (see docs/dashboard.md)')
  .option('--host <host>', 'address to listen on (beyond loopback a bearer token is required)', '127.0.0.1')
  .option('--port <port>', 'port (0: any free one)', int('--port', 0, 65_535), 8378)
  .option('--token-env <var>', 'environment variable holding the token every request must carry')
  .option('--max-connections <n>', 'most open connections; one past it gets 503 and is closed', int('--max-connections', 1, 100_000), DOOR_DEFAULTS.maxConnections)
  .option('--max-streams <n>', 'most live-update event streams open at once; one past it gets 503', int('--max-streams', 1, 10_000), DEFAULT_MAX_STREAMS)
  .action(async (dirs: string[], o: { host: string; port: number; tokenEnv?: string; maxConnections: number; maxStreams: number }) => {
    const token = tokenFromEnv(o.tokenEnv, o.host);
    const catalog = new RunCatalog(dirs);
    const server = await startDashboard(catalog, { host: o.host, port: o.port, token, maxConnections: o.maxConnections, maxStreams: o.maxStreams });
    process.stderr.write(`${catalog.list().length} run(s) under ${dirs.join(', ')}; read-only\n`);
    console.log(`dashboard on ${server.url}${token ? ' (open it once with ?token=TOKEN)' : ''}`);
    await new Promise<void>((done) => {
      const stop = (): void => void server.close().finally(done);
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  });

const experiment = program.command('experiment').description('experiments on the trainer agent');
const transferCommand = experiment
  .command('transfer')
  .description('meta-train the controller on the train tasks, then compare it with random and model-based search on the held-out tasks')
  .option('--preset <name>', 'quick (4 tasks per train family, 1 per held-out family; a few minutes on 2 cores) | full (30 per train family, 2 per held-out family)', 'quick')
  .option('--tasks-per-iteration <n>', "train tasks each meta-training iteration takes (default: the preset's)", int('--tasks-per-iteration', 1, 100_000))
  .option('--iterations <n>', 'meta-training iterations (default: the preset\'s)', int('--iterations', 1, 10_000))
  .option('--group <g>', 'proposals per task per meta-training iteration (default: the preset\'s)', int('--group', 2, 256))
  .option('--seed <s>', 'seed (the first one, with --seeds)', int('--seed', 0, 2 ** 31 - 1))
  .option('--seeds <n>', 'independent repetitions with seeds S, S+1, …; the report gives means ± standard deviations', int('--seeds', 1, 100))
  .option('--reward <rule>', 'outer reward rule of meta-training: improvement | best | cost (default: improvement)')
  .option('--prune-flat', 'stop meta-training control jobs whose training returns stay flat past half their budget');
addFidelityOptions(transferCommand, 'meta-training (the held-out comparisons stay at full budget)')
  .option('--dir <dir>', 'where the runs, tables and plots go (default: runs/transfer-<timestamp>)')
  .option('--workers <n>', 'worker threads (default: one per core)', int('--workers', 1, 256))
  .option('--task-dir <dir>', `${TASK_DIR_HELP}; each joins the side its file names (experiments: train | held-out)`)
  .option('--json', 'one JSON object on stdout as the last line')
  .action(async (o: { taskDir?: string; preset: string; tasksPerIteration?: number; iterations?: number; group?: number; seed?: number; seeds?: number; reward?: string; pruneFlat?: boolean; fidelity: string; eta: number; minShare: number; dir?: string; workers?: number; json?: boolean }) => {
    if (o.preset !== 'quick' && o.preset !== 'full') throw new InvalidArgumentError(`--preset must be quick or full, got "${o.preset}"`);
    await useTaskDir(o.taskDir);
    const options = transferPreset(o.preset);
    if (o.iterations) options.iterations = o.iterations;
    if (o.group) options.group = o.group;
    if (o.tasksPerIteration) options.tasksPerIteration = o.tasksPerIteration;
    if (o.seed !== undefined) options.seed = o.seed;
    if (o.seeds !== undefined) options.seeds = o.seeds;
    if (o.pruneFlat) options.pruneFlat = true;
    const fidelity = fidelityFrom(o);
    if (fidelity) options.fidelity = fidelity;
    if (o.reward !== undefined) {
      if (!(REWARD_RULES as readonly string[]).includes(o.reward)) throw new InvalidArgumentError(`--reward must be one of ${REWARD_RULES.join(', ')}, got "${o.reward}"`);
      options.reward = { rule: o.reward as RewardRuleName, lambda: options.reward?.lambda ?? 0.5 };
    }
    const dir = resolve(o.dir ?? join('runs', `transfer-${new Date().toISOString().replace(/[:.]/g, '-')}`));
    process.stderr.write(`experiment directory: ${dir}\n`);
    const executor = new LocalExecutor({ workers: o.workers });
    let bar: ReturnType<typeof progressBar> | null = null;
    let barKey = '';
    try {
      const result = await runTransfer(dir, options, executor, (e) => {
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
      });
      (bar as ReturnType<typeof progressBar> | null)?.stop();
      if (o.json) console.log(JSON.stringify(result));
      else {
        console.log(readFileSync(result.files.markdown, 'utf8'));
        console.log(`tables and plots: ${result.files.markdown}, ${result.files.json}, ${result.files.curveSvg}, ${result.files.comparisonSvg}`);
      }
    } finally {
      await executor.close();
    }
  });

program.parseAsync(process.argv).catch((err: Error) => {
  if (err instanceof SpecError) {
    console.error(`rrl: invalid job spec:\n${err.issues.map((i) => `  - ${formatIssues([i])}`).join('\n')}`);
  } else if (err instanceof TaskDirError) {
    console.error(`rrl: task files with problems (check one with \`rrl task validate FILE\`):\n${err.problems.map((p) => `  - ${p}`).join('\n')}`);
  } else console.error(`rrl: ${err.message}`);
  process.exitCode = process.exitCode || 1;
});

/**
 * Where a GRPO step's seconds go, today's trainer settings against the shared prompt
 * (`rrl_client.prefix`): the shipped trainer (`python -m rrl_client.grpo`, patch form, guided, the
 * task's documentation in the prompt) runs the same steps twice, once with `--no-shared-prefix` and
 * once as shipped, one after the other on all cores, each against an `rrl serve` of its own (so no
 * job of one is answered from the other's results). Reports per arm the median over the steps after
 * the first (its warm-up) of the step's seconds split into generation, the harness's answer (the
 * jobs) and the update, generation tokens/s, the share of valid jobs, the share of answers cut at the
 * length cap and the mean answer length; and the shared arm's ratios to today's.
 *
 * Needs the Python environment (`python/setup-venv.sh`), the model (`python/fetch-model.sh`) and the
 * corpus (`python/fetch-corpus.sh`). Not in the default set: `npm run bench -- grpo-step`. Settings from
 * the environment: RRL_GRPO_MODEL (models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf), RRL_GRPO_ADAPTER (a
 * LoRA adapter to start from, e.g. rrl_client.sft's; none by default), RRL_GRPO_CORPUS (the tasks served:
 * `validation:1@modeldata`, a validation package), RRL_GRPO_TASKS (default: every corpus task served),
 * RRL_GRPO_STEPS (4), RRL_GRPO_ROUNDS (1: one job per completion; K: episodes of K rounds with feedback),
 * RRL_GRPO_OUT (runs/grpo-step).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { num, table } from '../src/cli/format.js';

/** One line of the trainer's `log.jsonl`, the fields read here. */
interface StepLine {
  step_s: number | null;
  generation_s: number | null;
  reward_call_s: number | null;
  update_s: number | null;
  tokens_per_s: number | null;
  completion_length: number | null;
  'outer/valid_share': number | null;
  'outer/truncated_share': number | null;
}

const ARMS = { today: ['--no-shared-prefix'], shared: [] } as const;
type Arm = keyof typeof ARMS;

/** Starts `rrl serve` on a free port with the corpus tasks; resolves with its URL once it listens. */
function startServe(runDir: string, corpus: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['bin/rrl.js', 'serve', '--port', '0', '--run', runDir, '--corpus', corpus], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done, fail) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) done({ url: m[1], child });
    });
    child.once('exit', (code) => fail(new Error(`rrl serve exited with code ${code} before listening`)));
  });
}

/** The corpus tasks a server lists, comma-separated. */
async function corpusTasks(url: string): Promise<string> {
  const rows = (await (await fetch(`${url}/v1/tasks`)).json()) as { id: string }[];
  return rows
    .map((r) => r.id)
    .filter((id) => id.startsWith('corpus-'))
    .join(',');
}

/** Runs the trainer for one arm on all cores; echoes each step's line to stderr. */
function runArm(arm: Arm, url: string, out: string, o: { model: string; adapter?: string; tasks: string; steps: number; rounds: number }): Promise<void> {
  const args = [
    '-m',
    'rrl_client.grpo',
    ...['--url', url, '--model', o.model, '--tasks', o.tasks, '--steps', String(o.steps)],
    ...['--num-generations', '8', '--prompts-per-step', '1', '--max-completion-length', '256', '--temperature', '0.8'],
    ...['--learning-rate', '5e-5', '--beta', '0.1', '--prompt-form', 'patch', '--guided', '--threads', '2', '--seed', '0'],
    ...(o.adapter ? ['--adapter', o.adapter] : []),
    ...(o.rounds > 1 ? ['--rounds', String(o.rounds)] : []),
    ...ARMS[arm],
    ...['--output-dir', join(out, arm)],
  ];
  const child = spawn(resolve('.venv/bin/python'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('{"step"')) process.stderr.write(`grpo-step bench [${arm}] ${line}\n`);
  });
  let tail = '';
  child.stderr!.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-4000)));
  return new Promise((done, fail) =>
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`${arm} trainer exited with code ${code}:\n${tail}`)))),
  );
}

const median = (xs: number[]): number | null => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** One arm's figures over its steps after the first. */
export function stepSummary(lines: StepLine[]): Record<string, number | null> {
  const used = lines.length > 1 ? lines.slice(1) : lines;
  const v = (key: keyof StepLine): number[] => used.map((l) => l[key]).filter((x): x is number => typeof x === 'number');
  return {
    steps: used.length,
    stepSeconds: median(v('step_s')),
    generationSeconds: median(v('generation_s')),
    harnessSeconds: median(v('reward_call_s')),
    updateSeconds: median(v('update_s')),
    tokensPerSecond: median(v('tokens_per_s')),
    validShare: mean(v('outer/valid_share')),
    truncatedShare: mean(v('outer/truncated_share')),
    answerTokens: mean(v('completion_length')),
  };
}

/** The benchmark (see the module comment). */
export async function grpoStep(): Promise<Record<string, unknown>> {
  const out = resolve(process.env.RRL_GRPO_OUT ?? 'runs/grpo-step');
  const model = resolve(process.env.RRL_GRPO_MODEL ?? 'models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf');
  const adapter = process.env.RRL_GRPO_ADAPTER ? resolve(process.env.RRL_GRPO_ADAPTER) : undefined;
  const corpus = process.env.RRL_GRPO_CORPUS ?? 'validation:1@modeldata';
  const steps = Number(process.env.RRL_GRPO_STEPS ?? 4);
  const rounds = Number(process.env.RRL_GRPO_ROUNDS ?? 1);
  if (!existsSync('.venv/bin/python')) return { skipped: 'no .venv: run python/setup-venv.sh first' };
  if (!existsSync(model)) return { skipped: `no model at ${model}: run python/fetch-model.sh first` };
  const summary: Partial<Record<Arm, Record<string, number | null>>> = {};
  let tasks = process.env.RRL_GRPO_TASKS ?? '';
  for (const arm of Object.keys(ARMS) as Arm[]) {
    for (const dir of [arm, `serve-${arm}`]) rmSync(join(out, dir), { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const serve = await startServe(join(out, `serve-${arm}`), corpus);
    try {
      tasks ||= await corpusTasks(serve.url);
      await runArm(arm, serve.url, out, { model, adapter, tasks, steps, rounds });
    } finally {
      serve.child.kill('SIGTERM');
    }
    const lines = readFileSync(join(out, arm, 'log.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as StepLine);
    summary[arm] = stepSummary(lines);
  }
  const today = summary.today!;
  const shared = summary.shared!;
  const ratio = (k: string): number | null => (today[k] && shared[k] !== null ? shared[k]! / today[k]! : null);
  const rows: [string, string, number][] = [
    ['seconds per step (median)', 'stepSeconds', 1],
    ['  generation', 'generationSeconds', 1],
    ["  the harness's answer (jobs)", 'harnessSeconds', 1],
    ['  update (log-probabilities, backward, optimiser)', 'updateSeconds', 1],
    ['generation tokens/s', 'tokensPerSecond', 1],
    ['valid jobs', 'validShare', 2],
    ['answers cut at the cap', 'truncatedShare', 2],
    ['answer tokens (mean)', 'answerTokens', 1],
  ];
  process.stderr.write(
    `${table(
      [`${steps - 1} steps after the first, 8 completions each`, 'today (--no-shared-prefix)', 'shared prompt', 'ratio'],
      rows.map(([label, key, digits]) => [label, num(today[key], digits), num(shared[key], digits), num(ratio(key), 2)]),
    )}\n`,
  );
  return {
    tasks,
    model,
    adapter: adapter ?? null,
    corpus,
    steps,
    today,
    shared,
    speedup: today.stepSeconds && shared.stepSeconds ? today.stepSeconds / shared.stepSeconds : null,
  };
}

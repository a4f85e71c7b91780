/**
 * GRPO of a real small language model on `rrl serve`'s rewards, against the same model frozen:
 * two `rrl serve` processes (one run each, so neither arm's history touches the other's rewards),
 * the shipped trainer (`python -m rrl_client.grpo`) on one and its `--frozen` control run on the
 * other, side by side with one torch thread each, the same prompts in the same order. Reports per
 * arm the harness's outer reward per step, the share of valid specs, the best hidden normalised
 * score, generation tokens/s and seconds per step, and draws the curves to an SVG.
 *
 * Needs the Python environment (`python/setup-venv.sh`) and the model (`python/fetch-model.sh`).
 * Not in the default bench set (about an hour on 2 cores): `npm run bench -- grpo`.
 * Settings from the environment: RRL_GRPO_STEPS (16), RRL_GRPO_TASKS (penguins-species,cars-mpg),
 * RRL_GRPO_MODEL (models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf), RRL_GRPO_OUT
 * (runs/grpo-measure), RRL_GRPO_SVG (where the plot goes; default OUT/grpo.svg),
 * RRL_GRPO_ARMS (grpo,frozen: which arms to run; an arm not run keeps its log in OUT, so a changed
 * trainer can be measured against an earlier frozen run of the same prompts and sampling),
 * RRL_GRPO_REPORT_ONLY=1 (report the logs already in OUT without training), RRL_GRPO_LR (2e-4),
 * RRL_GRPO_BETA (0.04: the KL coefficient), RRL_GRPO_FORMAT_WEIGHT (0.5: the format reward's weight),
 * RRL_GRPO_TITLE (the plot's title). With RRL_GRPO_REPORT_ONLY=1 it reports any OUT laid out as OUT/grpo/log.jsonl
 * and OUT/frozen/log.jsonl, e.g. `python -m rrl_client.llm_experiment`'s; its further GRPO seeds
 * (OUT/grpo-1/, OUT/grpo-2/, … of `--grpo-seeds`) get a column each, and the seeds' mean outer reward
 * per step against the frozen arm's, paired by step with its 90 % interval.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { TopLevelSpec } from 'vega-lite';
import { renderSvg } from '../src/outer/plots.js';
import { num, table } from '../src/cli/format.js';
import { pairedDifference } from '../src/util/paired-difference.js';

/** One line of the trainer's `log.jsonl`. */
interface StepLine {
  step: number;
  step_s: number;
  'outer/reward': number | null;
  'outer/valid_share': number | null;
  'outer/score_best': number | null;
  /** Distinct accepted specs this step per task, averaged over the step's tasks (absent in older logs). */
  'outer/distinct_specs'?: number | null;
  /** Mean hidden normalised score of the step's scored jobs (absent in older logs). */
  'outer/score_mean_step'?: number | null;
  'train/format_reward': number | null;
  tokens_per_s: number | null;
}

const ARMS = ['grpo', 'frozen'] as const;
type Arm = (typeof ARMS)[number];

/** Starts `rrl serve` on a free port for one arm; resolves with its URL once it listens. */
function startServe(runDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['bin/rrl.js', 'serve', '--port', '0', '--run', runDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done, fail) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) done({ url: m[1], child });
    });
    child.once('exit', (code) => fail(new Error(`rrl serve exited with code ${code} before listening`)));
  });
}

/** What both arms run with (the trainer's learning settings matter to the GRPO arm only). */
interface Settings {
  model: string;
  tasks: string;
  steps: number;
  threads: number;
  learningRate: string;
  beta: string;
  formatWeight: string;
}

/** Runs the trainer for one arm; echoes each step's line to stderr. */
function runArm(arm: Arm, url: string, out: string, settings: Settings): Promise<void> {
  const args = [
    '-m',
    'rrl_client.grpo',
    '--url',
    url,
    '--model',
    settings.model,
    '--tasks',
    settings.tasks,
    '--steps',
    String(settings.steps),
    '--num-generations',
    '4',
    '--prompts-per-step',
    '2',
    '--max-completion-length',
    '288',
    '--temperature',
    '0.5',
    '--learning-rate',
    settings.learningRate,
    '--beta',
    settings.beta,
    '--format-weight',
    settings.formatWeight,
    '--threads',
    String(settings.threads),
    '--seed',
    '0',
    '--output-dir',
    join(out, arm),
    ...(arm === 'frozen' ? ['--frozen'] : []),
  ];
  const child = spawn(resolve('.venv/bin/python'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('{"step"')) process.stderr.write(`grpo bench [${arm}] ${line}\n`);
  });
  let tail = '';
  child.stderr!.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-4000)));
  return new Promise((done, fail) =>
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`${arm} trainer exited with code ${code}:\n${tail}`)))),
  );
}

/** The steps of one arm's log. */
function readLog(out: string, arm: string): StepLine[] {
  const path = join(out, arm, 'log.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StepLine);
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const median = (xs: number[]): number | null => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const values = (lines: StepLine[], key: keyof StepLine): number[] => lines.map((l) => l[key]).filter((v): v is number => typeof v === 'number');

/** The summary of one arm over its first `steps` steps. */
export function summarise(lines: StepLine[], steps: number): Record<string, number | null> {
  const used = lines.slice(0, steps);
  const last = used.slice(-5);
  return {
    steps: used.length,
    meanReward: mean(values(used, 'outer/reward')),
    firstFiveReward: mean(values(used.slice(0, 5), 'outer/reward')),
    lastFiveReward: mean(values(last, 'outer/reward')),
    validShare: mean(values(used, 'outer/valid_share')),
    firstFiveFormat: mean(values(used.slice(0, 5), 'train/format_reward')),
    lastFiveFormat: mean(values(last, 'train/format_reward')),
    lastFiveValidShare: mean(values(last, 'outer/valid_share')),
    bestScore: Math.max(-Infinity, ...values(used, 'outer/score_best')) === -Infinity ? null : Math.max(...values(used, 'outer/score_best')),
    distinctSpecs: mean(values(used, 'outer/distinct_specs')),
    meanScore: mean(values(used, 'outer/score_mean_step')),
    tokensPerSecond: median(values(used, 'tokens_per_s')),
    secondsPerStep: median(values(used, 'step_s')),
  };
}

/** The per-step metrics the plot draws, each as (label, the log's value); a metric an older log lacks is left out. */
const CURVES: [string, (l: StepLine) => number | null | undefined][] = [
  ['outer reward (harness)', (l) => l['outer/reward']],
  ['share of valid specs', (l) => l['outer/valid_share']],
  ['distinct valid specs per task', (l) => l['outer/distinct_specs']],
  ['mean hidden score of the step', (l) => l['outer/score_mean_step']],
  ['best hidden score so far', (l) => l['outer/score_best']],
  ['generation tokens/s', (l) => l.tokens_per_s],
  ['seconds per step', (l) => l.step_s],
];

/** Every metric of CURVES per step, both arms, as a Vega-Lite chart with a row each. */
function curveSpec(logs: Record<Arm, StepLine[]>, steps: number): TopLevelSpec {
  const rows = ARMS.flatMap((arm) =>
    logs[arm].slice(0, steps).flatMap((l) =>
      CURVES.flatMap(([metric, value]) => {
        const v = value(l);
        return typeof v === 'number' ? [{ step: l.step, arm: arm === 'grpo' ? 'GRPO (LoRA)' : 'frozen', metric, value: v }] : [];
      }),
    ),
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: process.env.RRL_GRPO_TITLE ?? 'SmolLM2-135M-Instruct writing training jobs: GRPO on the harness reward vs frozen',
    data: { values: rows },
    facet: { row: { field: 'metric', type: 'nominal', title: null } },
    resolve: { scale: { y: 'independent' } },
    spec: {
      width: 480,
      height: 160,
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'step', type: 'quantitative', title: 'GRPO step (8 completions each)', axis: { tickMinStep: 1 } },
        y: { field: 'value', type: 'quantitative', title: null },
        color: { field: 'arm', type: 'nominal', title: null },
      },
    },
  };
}

/** The benchmark (see the module comment). */
export async function grpo(): Promise<Record<string, unknown>> {
  const out = resolve(process.env.RRL_GRPO_OUT ?? 'runs/grpo-measure');
  const settings: Settings = {
    model: process.env.RRL_GRPO_MODEL ?? 'models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
    tasks: process.env.RRL_GRPO_TASKS ?? 'penguins-species,cars-mpg',
    steps: Number(process.env.RRL_GRPO_STEPS ?? 16),
    threads: 1,
    learningRate: process.env.RRL_GRPO_LR ?? '2e-4',
    beta: process.env.RRL_GRPO_BETA ?? '0.04',
    formatWeight: process.env.RRL_GRPO_FORMAT_WEIGHT ?? '0.5',
  };
  const arms = (process.env.RRL_GRPO_ARMS ?? 'grpo,frozen').split(',').filter((a): a is Arm => (ARMS as readonly string[]).includes(a));
  settings.threads = arms.length === 1 ? 2 : 1; // the machine's 2 cores, shared by the arms
  if (process.env.RRL_GRPO_REPORT_ONLY !== '1') {
    if (!existsSync('.venv/bin/python')) return { skipped: 'no .venv: run python/setup-venv.sh first' };
    if (!existsSync(settings.model)) return { skipped: `no model at ${settings.model}: run python/fetch-model.sh first` };
    for (const arm of arms) for (const dir of [arm, `serve-${arm}`]) rmSync(join(out, dir), { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const serves = await Promise.all(arms.map((arm) => startServe(join(out, `serve-${arm}`))));
    try {
      await Promise.all(arms.map((arm, i) => runArm(arm, serves[i].url, out, settings)));
    } finally {
      for (const s of serves) s.child.kill('SIGTERM');
    }
  }
  const logs = { grpo: readLog(out, 'grpo'), frozen: readLog(out, 'frozen') };
  const steps = Math.min(logs.grpo.length, logs.frozen.length, settings.steps);
  if (steps === 0) return { skipped: `no steps logged in ${out}` };
  const summary = { grpo: summarise(logs.grpo, steps), frozen: summarise(logs.frozen, steps) };
  const svg = process.env.RRL_GRPO_SVG ?? join(out, 'grpo.svg');
  writeFileSync(svg, await renderSvg(curveSpec(logs, steps)));
  const rows: [string, keyof (typeof summary)['grpo'], number][] = [
    ['mean outer reward, all steps', 'meanReward', 3],
    ['mean outer reward, first 5 steps', 'firstFiveReward', 3],
    ['mean outer reward, last 5 steps', 'lastFiveReward', 3],
    ['valid specs, all steps', 'validShare', 2],
    ['valid specs, last 5 steps', 'lastFiveValidShare', 2],
    ['format reward (trainer side), first 5 steps', 'firstFiveFormat', 3],
    ['format reward (trainer side), last 5 steps', 'lastFiveFormat', 3],
    ['best hidden normalised score', 'bestScore', 3],
    ['distinct valid specs per task per step (mean)', 'distinctSpecs', 2],
    ['hidden normalised score of scored jobs, per step (mean)', 'meanScore', 3],
    ['generation tokens/s (median)', 'tokensPerSecond', 1],
    ['seconds per step (median)', 'secondsPerStep', 1],
  ];
  const seeds = seedLogs(out, steps);
  const seedSummaries = seeds.map(([, lines]) => summarise(lines, steps));
  process.stderr.write(
    `${table(
      [`over ${steps} steps`, 'GRPO (LoRA)', ...seeds.map(([name]) => name), 'frozen'],
      rows.map(([label, key, digits]) => [
        label,
        num(summary.grpo[key], digits),
        ...seedSummaries.map((s) => num(s[key], digits)),
        num(summary.frozen[key], digits),
      ]),
    )}\n${seeds.length ? `${seedsAgainstFrozen([logs.grpo, ...seeds.map(([, l]) => l)], logs.frozen, steps)}\n` : ''}plot: ${svg}\n`,
  );
  const ran = process.env.RRL_GRPO_REPORT_ONLY !== '1' ? { tasks: settings.tasks, model: settings.model } : {}; // a report of earlier logs knows neither
  return { steps, ...ran, ...summary, seeds: Object.fromEntries(seeds.map(([n], i) => [n, seedSummaries[i]])), svg };
}

/** The further GRPO seeds' logs in OUT (`grpo-1/`, `grpo-2/`, … while they exist), each with at least `steps` steps. */
function seedLogs(out: string, steps: number): [string, StepLine[]][] {
  const found: [string, StepLine[]][] = [];
  for (let k = 1; existsSync(join(out, `grpo-${k}`, 'log.jsonl')); k++) {
    const lines = readLog(out, `grpo-${k}`);
    if (lines.length >= steps) found.push([`grpo-${k}`, lines]);
  }
  return found;
}

/** The GRPO seeds' mean outer reward per step minus the frozen arm's, paired by step (one line). */
function seedsAgainstFrozen(runs: StepLine[][], frozen: StepLine[], steps: number): string {
  const reward = (l: StepLine | undefined): number | null => l?.['outer/reward'] ?? null;
  const perStep = Array.from({ length: steps }, (_, i) => {
    const vs = runs.map((r) => reward(r[i])).filter((v): v is number => v !== null);
    return vs.length === runs.length ? vs.reduce((a, b) => a + b, 0) / vs.length : null;
  });
  const d = pairedDifference(perStep, frozen.slice(0, steps).map(reward));
  if (!d) return `GRPO over ${runs.length} seeds − frozen: no step with both`;
  const ci = d.lo === null || d.hi === null ? '' : ` [${num(d.lo, 3)}, ${num(d.hi, 3)}] (90 %)`;
  return `GRPO over ${runs.length} seeds − frozen, outer reward paired by step: ${num(d.mean, 3)}${ci} over ${d.n} steps`;
}

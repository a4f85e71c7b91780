/**
 * `rrl experiment transfer`: does a trainer agent trained on the outer reward write better
 * jobs than search that starts from nothing, also on tasks it never trained on?
 *
 * 1. Meta-train the controller on the train tasks (GRPO on the outer reward).
 * 2. On every held-out task, with the controller frozen: its first proposal (zero-shot: the
 *    mode of its policy, its single best guess) and its best of 4 and 16 (that guess plus
 *    samples); the controller adapting (four rounds of 4 from the meta-trained weights, GRPO
 *    on the task's own rewards between rounds) for its best of 16; random search's best of 4
 *    and 16; the model-based search's best of 4 (its first round) and 16 (four rounds of 4,
 *    learning from its own rewards); and the task's baseline spec. Every job runs on the same
 *    engine, and identical specs share one cached result.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '../run/executor.js';
import { Store } from '../store/store.js';
import { listTasks } from '../tasks/briefs.js';
import { builtInTaskIds } from '../tasks/extra.js';
import { initTf } from '../inner/tf.js';
import { Controller } from './agents/controller.js';
import type { Agent } from './agents/types.js';
import { type LoopEvent, type TrainConfig, train } from './loop.js';
import type { FidelityConfig } from './fidelity.js';
import { comparisonSpec, learningCurveSpec, renderSvg } from './plots.js';
import type { RewardRuleName } from './reward.js';

/** Settings of the experiment. */
export interface TransferOptions {
  trainTasks: string[];
  heldOutTasks: string[];
  iterations: number;
  group: number;
  seed: number;
  /** The outer reward rule of meta-training (default: cost-aware, λ 0.5). */
  reward?: { rule: RewardRuleName; lambda: number };
  /** Prune flat control jobs during meta-training (default off). */
  pruneFlat?: boolean;
  /** Successive halving within each meta-training group (default off; held-out comparisons stay at full budget). */
  fidelity?: FidelityConfig;
  /** Independent repetitions with seeds seed, seed + 1, …; the report gives means and spreads (default 1). */
  seeds?: number;
}

/** The presets: `quick` finishes within about 15 minutes on 2 cores; `full` uses every task. */
export function transferPreset(name: 'quick' | 'full'): TransferOptions {
  const split = (s: 'train' | 'held-out'): string[] => listTasks().filter((t) => t.brief.split === s).map((t) => t.brief.id);
  const reward = { rule: 'cost' as const, lambda: 0.5 };
  if (name === 'full') return { trainTasks: split('train'), heldOutTasks: split('held-out'), iterations: 20, group: 8, seed: 1, reward };
  // The user's registered tasks join the quick preset too, on the side their files name.
  const builtIn = new Set(builtInTaskIds());
  const own = (s: 'train' | 'held-out'): string[] => split(s).filter((id) => !builtIn.has(id));
  return {
    trainTasks: ['cartpole-balance', 'penguins-species', 'two-spirals', ...own('train')],
    heldOutTasks: ['cartpole-short', 'iris-species', 'two-moons', ...own('held-out')],
    iterations: 10,
    group: 6,
    seed: 1,
    reward,
  };
}

/** One held-out task's row. */
export interface HeldOutRow {
  task: string;
  zeroShot: number | null;
  controllerBest4: number | null;
  controllerBest16: number | null;
  /** The controller's best of 16 when it keeps learning on the task: four rounds of four, GRPO between rounds. */
  controllerAdaptBest16: number | null;
  randomBest4: number | null;
  randomBest16: number | null;
  searchBest4: number | null;
  searchBest16: number | null;
  baseline: number | null;
}

/** The experiment's result, as `--json` prints it. */
export interface TransferResult {
  options: TransferOptions;
  curve: { iteration: number; meanReward: number; meanNormalized: number | null; bestNormalized: number | null }[];
  /** Mean normalised hidden score per method on the held-out tasks (mean over seeds). */
  heldOut: Omit<HeldOutRow, 'task'>;
  /** Standard deviation of the per-seed held-out means (0 with one seed). */
  spread: Omit<HeldOutRow, 'task'>;
  /** Per held-out task, the mean over seeds. */
  rows: HeldOutRow[];
  perSeed: { seed: number; heldOut: Omit<HeldOutRow, 'task'>; rows: HeldOutRow[]; curve: TransferResult['curve'] }[];
  files: { markdown: string; json: string; curveSvg: string; comparisonSvg: string };
  wallSeconds: number;
}

/**
 * The meta-trained controller on a held-out task: its first proposal per task is its mode;
 * frozen, it never learns, adapting, it keeps its GRPO updates on the task's own rewards.
 */
class HeldOut implements Agent {
  readonly name: string;
  private readonly asked = new Set<string>();
  constructor(
    private readonly inner: Agent,
    private readonly adapt: boolean,
  ) {
    this.name = adapt ? 'controller-adapting' : 'controller-frozen';
  }
  propose(...[brief, ctx]: Parameters<Agent['propose']>) {
    const first = !this.asked.has(brief.id);
    this.asked.add(brief.id);
    return this.inner.propose(brief, first ? { ...ctx, greedy: true } : ctx);
  }
  async update(...args: Parameters<Agent['update']>) {
    return this.adapt ? this.inner.update(...args) : {};
  }
  state() {
    return this.inner.state();
  }
  async load() {}
}

const METHODS: [keyof Omit<HeldOutRow, 'task'>, string][] = [
  ['zeroShot', 'controller zero-shot'],
  ['controllerBest4', 'controller best of 4'],
  ['controllerBest16', 'controller best of 16'],
  ['controllerAdaptBest16', 'controller best of 16, adapting'],
  ['randomBest4', 'random best of 4'],
  ['randomBest16', 'random best of 16'],
  ['searchBest4', 'search best of 4'],
  ['searchBest16', 'search best of 16'],
  ['baseline', 'baseline spec'],
];

function best(scores: (number | null)[]): number | null {
  const xs = scores.filter((s): s is number => s !== null);
  return xs.length ? Math.max(...xs) : null;
}

/** Reads the normalised scores of a finished run's proposals in proposal order, and its baselines. */
function readRun(dir: string): { proposals: (number | null)[]; baseline: number | null } {
  const store = new Store(dir);
  try {
    const run = store.getRun()!;
    const jobs = store.jobs(run.id);
    // A failed or invalid job scores the floor of the scale (the trivial or random anchor).
    const proposals = jobs.filter((j) => j.kind === 'proposal').map((j) => (j.status === 'succeeded' ? j.normalized : 0));
    const baseline = jobs.find((j) => j.kind === 'baseline')?.normalized ?? null;
    return { proposals, baseline };
  } finally {
    store.close();
  }
}

/** What one seed of the experiment yields. */
interface SeedResult {
  seed: number;
  curve: TransferResult['curve'];
  rows: HeldOutRow[];
  heldOut: Omit<HeldOutRow, 'task'>;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]): number => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));
/** Mean of the non-null values, or null when there are none. */
const meanOf = (vs: (number | null)[]): number | null => {
  const xs = vs.filter((v): v is number => v !== null);
  return xs.length ? mean(xs) : null;
};
const methodMeans = (rows: Omit<HeldOutRow, 'task'>[]): Omit<HeldOutRow, 'task'> =>
  Object.fromEntries(METHODS.map(([k]) => [k, meanOf(rows.map((r) => r[k]))])) as Omit<HeldOutRow, 'task'>;

/** Meta-trains one controller and compares methods on the held-out tasks, for one seed, in `dir`. */
async function runSeed(dir: string, options: TransferOptions, seed: number, cache: string, executor: Executor, onEvent?: (e: LoopEvent & { stage?: string }) => void): Promise<SeedResult> {
  const tag = (options.seeds ?? 1) > 1 ? `seed ${seed}: ` : '';
  const emit = (stage: string) => (e: LoopEvent) => onEvent?.({ ...e, stage: `${tag}${stage}` });

  // 1. Meta-training.
  const controller = new Controller({ seed });
  const metaConfig: TrainConfig = {
    tasks: options.trainTasks,
    agent: 'controller',
    iterations: options.iterations,
    group: options.group,
    seed,
    reward: options.reward,
    pruneFlat: options.pruneFlat ?? false,
    ...(options.fidelity ? { fidelity: options.fidelity } : {}),
  };
  onEvent?.({ type: 'phase', message: `${tag}meta-training the controller on ${options.trainTasks.length} train tasks`, stage: 'meta' });
  const meta = await train(join(dir, 'meta'), metaConfig, executor, { agent: controller, cache, onEvent: emit('meta') });

  // 2. Held-out tasks.
  const rows: HeldOutRow[] = [];
  for (const [i, task] of options.heldOutTasks.entries()) {
    const base = { tasks: [task], seed: seed * 1000 + i };
    onEvent?.({ type: 'phase', message: `${tag}held-out ${task}: controller (frozen), random search, model-based search`, stage: task });
    await train(join(dir, task, 'controller'), { ...base, agent: 'controller', iterations: 1, group: 16 }, executor, { agent: new HeldOut(controller, false), cache, onEvent: emit(task) });
    // Adapting: a copy of the meta-trained controller (every task starts from the same weights) in rounds like the search's.
    const copy = new Controller({ seed });
    await copy.load(await controller.state());
    await train(join(dir, task, 'controller-adapt'), { ...base, agent: 'controller', iterations: 4, group: 4 }, executor, { agent: new HeldOut(copy, true), cache, onEvent: emit(task) });
    await train(join(dir, task, 'random'), { ...base, agent: 'random', iterations: 1, group: 16 }, executor, { cache, onEvent: emit(task) });
    await train(join(dir, task, 'search'), { ...base, agent: 'search', iterations: 4, group: 4 }, executor, { cache, onEvent: emit(task) });
    const c = readRun(join(dir, task, 'controller'));
    const r = readRun(join(dir, task, 'random'));
    const s = readRun(join(dir, task, 'search'));
    rows.push({
      task,
      zeroShot: c.proposals[0] ?? null,
      controllerBest4: best(c.proposals.slice(0, 4)),
      controllerBest16: best(c.proposals),
      controllerAdaptBest16: best(readRun(join(dir, task, 'controller-adapt')).proposals),
      randomBest4: best(r.proposals.slice(0, 4)),
      randomBest16: best(r.proposals),
      searchBest4: best(s.proposals.slice(0, 4)),
      searchBest16: best(s.proposals),
      baseline: c.baseline,
    });
  }
  return { seed, curve: meta.iterations, rows, heldOut: methodMeans(rows) };
}

/**
 * Runs the transfer experiment in `dir` with `executor`: one meta-training and comparison per
 * seed (in `dir/seed-S` when there are several), then one report of the means over seeds.
 */
export async function runTransfer(dir: string, options: TransferOptions, executor: Executor, onEvent?: (e: LoopEvent & { stage?: string }) => void): Promise<TransferResult> {
  const t0 = performance.now();
  mkdirSync(dir, { recursive: true });
  const cache = join(dir, 'cache.db');
  await initTf();
  const nSeeds = options.seeds ?? 1;
  const perSeed: SeedResult[] = [];
  for (let k = 0; k < nSeeds; k++) {
    const seed = options.seed + k;
    perSeed.push(await runSeed(nSeeds > 1 ? join(dir, `seed-${seed}`) : dir, options, seed, cache, executor, onEvent));
  }
  // Means over seeds: the curve per iteration, each task's row, and the held-out means (with their spread).
  const curve = perSeed[0].curve.map((p, i) => {
    const at = perSeed.map((r) => r.curve[i]);
    return {
      iteration: p.iteration,
      meanReward: mean(at.map((q) => q.meanReward)),
      meanNormalized: meanOf(at.map((q) => q.meanNormalized)),
      bestNormalized: meanOf(at.map((q) => q.bestNormalized)),
    };
  });
  const rows: HeldOutRow[] = options.heldOutTasks.map((task, i) => ({ task, ...methodMeans(perSeed.map((r) => r.rows[i])) }));
  const heldOut = methodMeans(perSeed.map((r) => r.heldOut));
  const spread = Object.fromEntries(
    METHODS.map(([k]) => {
      const xs = perSeed.map((r) => r.heldOut[k]).filter((v): v is number => v !== null);
      return [k, xs.length ? sd(xs) : null];
    }),
  ) as Omit<HeldOutRow, 'task'>;

  // Report: markdown, JSON, SVG plots.
  const fmt = (v: number | null): string => (v === null ? '—' : v.toFixed(3));
  const markdown = [
    `# Transfer experiment`,
    '',
    `Meta-training: ${options.trainTasks.join(', ')}; ${options.iterations} iterations × ${options.group} proposals per task; outer reward \`${options.reward?.rule ?? 'improvement'}\`${options.reward?.rule === 'cost' ? ` (λ ${options.reward.lambda})` : ''}.`,
    nSeeds > 1 ? `Seeds ${perSeed.map((r) => r.seed).join(', ')}: every figure is the mean over seeds; ± is the standard deviation of the per-seed means.` : `Seed ${options.seed}.`,
    '',
    '## Outer learning curve (train tasks)',
    '',
    '| iteration | mean outer reward | mean normalised score | best normalised score |',
    '| --- | --- | --- | --- |',
    ...curve.map((p) => `| ${p.iteration + 1} | ${fmt(p.meanReward)} | ${fmt(p.meanNormalized)} | ${fmt(p.bestNormalized)} |`),
    '',
    '## Held-out tasks (normalised hidden score)',
    '',
    `| task | ${METHODS.map(([, label]) => label).join(' | ')} |`,
    `| --- | ${METHODS.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.task} | ${METHODS.map(([k]) => fmt(r[k])).join(' | ')} |`),
    `| **mean** | ${METHODS.map(([k]) => `**${fmt(heldOut[k])}**${nSeeds > 1 && spread[k] !== null ? ` ± ${fmt(spread[k])}` : ''}`).join(' | ')} |`,
    '',
    ...(nSeeds > 1
      ? [
          '## Held-out means per seed',
          '',
          `| seed | ${METHODS.map(([, label]) => label).join(' | ')} |`,
          `| --- | ${METHODS.map(() => '---').join(' | ')} |`,
          ...perSeed.map((r) => `| ${r.seed} | ${METHODS.map(([k]) => fmt(r.heldOut[k])).join(' | ')} |`),
          '',
        ]
      : []),
  ].join('\n');
  const files = {
    markdown: join(dir, 'transfer.md'),
    json: join(dir, 'transfer.json'),
    curveSvg: join(dir, 'learning-curve.svg'),
    comparisonSvg: join(dir, 'held-out.svg'),
  };
  writeFileSync(files.markdown, markdown);
  writeFileSync(files.curveSvg, await renderSvg(learningCurveSpec(curve)));
  writeFileSync(
    files.comparisonSvg,
    await renderSvg(comparisonSpec(METHODS.filter(([k]) => heldOut[k] !== null).map(([k, label]) => ({ method: label, score: heldOut[k] as number })))),
  );
  const result: TransferResult = {
    options,
    curve,
    heldOut,
    spread,
    rows,
    perSeed: perSeed.map((r) => ({ seed: r.seed, heldOut: r.heldOut, rows: r.rows, curve: r.curve })),
    files,
    wallSeconds: (performance.now() - t0) / 1000,
  };
  writeFileSync(files.json, JSON.stringify(result, null, 2));
  return result;
}

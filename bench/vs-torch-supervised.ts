/**
 * `npm run bench -- vs-torch-supervised`: the supervised engine against a plain PyTorch CPU loop
 * (`bench/vs-torch/supervised_mlp.py`, one thread) on the same data, split, minibatch size, example
 * budget and stopping rule: Adam (lr 1e-3), cross-entropy, batch 64, 150k examples (the budget ends
 * training inside an epoch on both sides), 10 % validation evaluated after every epoch. Two cases:
 *
 *   - numeric: two spirals, 10,000 rows, MLP 2-64-64-2 (relu);
 *   - categorical: a table of 5,000 rows with 4 numeric columns (two with missing cells) and 3
 *     categorical ones (5, 12 and 30 levels, the last with missing cells), one-hot encoded by the
 *     default column decisions (maxLevels 16, median fill, "was missing" indicators): 40 inputs,
 *     MLP 64-64, 3 classes.
 *
 * Our side trains through `runJob` (the job path: spec checks, the supervised trainer, the artifact);
 * its time is the job's wall-clock (`cost.wallSeconds`) and the job thread's CPU seconds (`cost.cpuSeconds`; the
 * reference's process CPU seconds beside its wall-clock): on a shared machine the CPU ratio is the steadier figure. The categorical table is encoded in the
 * bench by `fitColumns`/`applyColumns` (fitted on the engine's training rows) and the job trains on
 * the encoded matrix as a numeric dataset: the engine's set-up does not encode columns yet. The
 * reference encodes the raw table with NumPy the same way (timed, and checked against our matrix)
 * and trains on our matrix. Encoding times are reported apart from training times.
 *
 * Runs alternate (reference, then project) for seeds 1…RRL_VS_TORCH_SUP_RUNS (default 5); prints each
 * run, the medians and their ratio. RRL_TORCH_PYTHON names a Python with torch and numpy (default
 * `.venv/bin/python` in the repository, then `python3`), RRL_TORCH_REF another folder holding a
 * `supervised_mlp.py`, RRL_VS_TORCH_SUP_EXAMPLES the budget. Without a Python that imports torch the
 * project runs alone and the bench says why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { num, table } from '../src/cli/format.js';
import { type RawColumn, DEFAULT_COLUMN_DECISIONS, applyColumns, fitColumns } from '../src/inner/data/columns.js';
import { drawMixture } from '../src/inner/algos/supervised.js';
import { runJob } from '../src/inner/train.js';
import type { TaskBrief } from '../src/spec/brief.js';
import { JobSpecSchema, type JobSpecInput } from '../src/spec/schema.js';
import { getPublicTask } from '../src/tasks/briefs.js';
import { Rng, mixSeed } from '../src/util/rng.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCRIPT = 'supervised_mlp.py';
const TASK = 'vs-torch-supervised';
const log = (s: string): boolean => process.stderr.write(`${s}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One case: the raw table (categorical case), the network and the settings both sides share. */
interface Case {
  name: string;
  hidden: number[];
  classes: number;
  y: number[];
  /** The numeric matrix (numeric case); the categorical case encodes `raw` per seed. */
  x: number[][] | null;
  raw: RawColumn[] | null;
}

/** The reference's folder and a Python that imports torch, or why there is none. */
function findReference(): { dir: string; python: string } | { skip: string } {
  const dir = process.env.RRL_TORCH_REF ?? join(ROOT, 'bench', 'vs-torch');
  if (!existsSync(join(dir, SCRIPT))) return { skip: `no PyTorch reference: ${SCRIPT} not found in ${dir} (RRL_TORCH_REF)` };
  const pythons = process.env.RRL_TORCH_PYTHON ? [process.env.RRL_TORCH_PYTHON] : [join(ROOT, '.venv', 'bin', 'python'), 'python3'];
  for (const python of pythons) {
    const r = spawnSync(python, ['-c', 'import torch, numpy; print(torch.__version__)'], { encoding: 'utf8' });
    if (r.status === 0) return { dir, python };
  }
  return { skip: `no PyTorch reference: none of ${pythons.join(', ')} imports torch and numpy (set RRL_TORCH_PYTHON; pip install torch==2.13.0 numpy)` };
}

/** Two interleaved noisy spirals: 2 features, 2 classes. */
function spirals(n: number): Case {
  const rng = new Rng(44);
  const x: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = i % 2;
    const t = 0.5 + 3 * Math.PI * rng.next();
    const s = c ? -1 : 1;
    x.push([s * t * Math.cos(t) + 0.4 * rng.normal(), s * t * Math.sin(t) + 0.4 * rng.normal()]);
    y.push(c);
  }
  return { name: 'numeric 2-64-64-2', hidden: [64, 64], classes: 2, x, y, raw: null };
}

/** A mixed table: 4 numeric columns (two with missing cells), 3 categorical (5, 12, 30 levels; the last with missing cells), 3 classes. */
function mixedTable(n: number): Case {
  const rng = new Rng(4444);
  const levels = (prefix: string, k: number): string[] => Array.from({ length: k }, (_, j) => `${prefix}${j}`);
  const [l1, l2, l3] = [levels('a', 5), levels('m', 12), levels('z', 30)];
  const zipf = (k: number): number => Math.min(k - 1, Math.floor(k * rng.next() ** 2.5));
  const cols = {
    n1: [] as number[],
    n2: [] as number[],
    n3: [] as number[],
    n4: [] as number[],
    c1: [] as string[],
    c2: [] as string[],
    c3: [] as (string | null)[],
  };
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const [a, b, c, d] = [rng.normal(), 100 * rng.next(), -Math.log(1 - rng.next()), rng.normal() * 3 + 1];
    const [i1, i2, i3] = [rng.int(5), zipf(12), zipf(30)];
    const score = [a + (i1 === 0 ? 1 : 0) + 0.3 * (i3 % 3), b / 50 - 1 + (i2 < 3 ? 0.8 : 0), c - 1 + 0.2 * d + (i3 > 10 ? 1 : 0)];
    const noisy = score.map((v) => v + 0.5 * rng.normal());
    y.push(noisy.indexOf(Math.max(...noisy)));
    cols.n1.push(a);
    cols.n2.push(rng.next() < 0.1 ? Number.NaN : b);
    cols.n3.push(c);
    cols.n4.push(rng.next() < 0.05 ? Number.NaN : d);
    cols.c1.push(l1[i1]);
    cols.c2.push(l2[i2]);
    cols.c3.push(rng.next() < 0.03 ? null : l3[i3]);
  }
  const raw: RawColumn[] = [
    ...(['n1', 'n2', 'n3', 'n4'] as const).map((name) => ({ name, kind: 'numeric' as const, values: cols[name] })),
    ...(['c1', 'c2', 'c3'] as const).map((name) => ({ name, kind: 'categorical' as const, values: cols[name] })),
  ];
  return { name: 'categorical 40-64-64-3', hidden: [64, 64], classes: 3, x: null, y, raw };
}

/** The job spec both sides follow. */
function specFor(c: Case, seed: number, examples: number): JobSpecInput {
  return {
    task: TASK,
    environment: { standardize: true },
    reward: { objective: 'cross-entropy' },
    dataset: { sources: [{ id: 'rows', weight: 1 }], validationFraction: 0.1 },
    model: { hidden: c.hidden, activation: 'relu' },
    algorithm: { name: 'supervised', optimizer: 'adam', learningRate: 1e-3, batchSize: 64, epochs: 500 },
    budget: { examples },
    seed,
  };
}

/** The engine's own training and validation rows for a spec (its mixture and split, replayed on row numbers). */
function engineSplit(input: JobSpecInput, n: number): { train: number[]; val: number[] } {
  const spec = JobSpecSchema.parse(input);
  const rng = new Rng(mixSeed(spec.seed, 0xda7a));
  const rows = Array.from({ length: n }, (_, i) => [i]);
  const all = drawMixture(spec, { sources: { rows: { x: rows, y: new Array<number>(n).fill(0) } } }, rng);
  const order = rng.permutation(all.x.length);
  const nVal = Math.floor(order.length * spec.dataset.validationFraction);
  return { val: order.slice(0, nVal).map((k) => all.x[k][0]), train: order.slice(nVal).map((k) => all.x[k][0]) };
}

/** The categorical table encoded by the default decisions, fitted on the training rows; and the seconds it took. */
function encode(raw: RawColumn[], y: number[], classes: number, train: number[]): { x: number[][]; seconds: number } {
  const t0 = performance.now();
  const pick = <T>(v: readonly T[]): T[] => train.map((i) => v[i]);
  const rows = raw.map((c) => ({ ...c, values: pick(c.values as readonly unknown[]) }) as RawColumn);
  const fit = fitColumns(rows, { kind: 'classification', y: pick(y), classes }, { ...DEFAULT_COLUMN_DECISIONS }, 1);
  const x = applyColumns(fit.state, raw);
  return { x, seconds: (performance.now() - t0) / 1000 };
}

/** A brief for the bench's table: a real supervised brief's fields with this table's features, classes and caps. */
function briefFor(d: number, classes: number): TaskBrief {
  const base = getPublicTask('penguins-species').brief;
  return {
    ...base,
    id: TASK,
    budget: { ...base.budget, maxExamples: 10_000_000, maxWallSeconds: 3600 },
    supervised: {
      features: Array.from({ length: d }, (_, j) => ({ name: `x${j}`, description: '' })),
      target: { name: 'label', description: '', type: 'classification', classes: Array.from({ length: classes }, (_, c) => `c${c}`) },
      sources: [{ id: 'rows', description: 'the bench table', examples: 0 }],
    },
  };
}

/** One run's figures on one side. */
interface Side {
  trainS: number;
  cpuS: number;
  accuracy: number;
  encodeS: number | null;
}

/** One reference run on the job file; its training seconds, validation accuracy and encoding. */
function runTorch(ref: { dir: string; python: string }, file: string, seed: number): Side & { encodeDiff: number | null } {
  const r = spawnSync(ref.python, [SCRIPT, '--data', file, '--seed', String(seed), '--threads', '1'], { cwd: ref.dir, encoding: 'utf8', timeout: 900_000 });
  const line = r.stdout?.split('\n').find((l) => l.startsWith('SUMMARY '));
  if (r.status !== 0 || !line) throw new Error(`reference run failed (exit ${r.status}): ${(r.stderr ?? '').slice(-500)}`);
  const s = JSON.parse(line.slice('SUMMARY '.length)) as {
    train_wall_s: number;
    train_cpu_s: number;
    val_accuracy: number;
    encode_s?: number;
    encode_max_abs_diff?: number;
  };
  return { trainS: s.train_wall_s, cpuS: s.train_cpu_s, accuracy: s.val_accuracy, encodeS: s.encode_s ?? null, encodeDiff: s.encode_max_abs_diff ?? null };
}

/** One project run through the job path on the (encoded) matrix. */
async function runProject(input: JobSpecInput, x: number[][], y: number[], classes: number, encodeS: number | null): Promise<Side & { examples: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-vs-torch-sup-'));
  const a = await runJob(input, briefFor(x[0].length, classes), { outDir: dir, data: { sources: { rows: { x, y } } } });
  return { trainS: a.cost.wallSeconds, cpuS: a.cost.cpuSeconds, accuracy: a.trainReturn ?? Number.NaN, encodeS, examples: a.cost.examples };
}

/** One row of the printed table. */
interface Row {
  case: string;
  seed: number;
  torch: (Side & { encodeDiff: number | null }) | null;
  project: Side & { examples: number };
}

/** Seeds 1…runs of one case, alternating the reference and the project. */
async function runCase(c: Case, ref: ReturnType<typeof findReference>, runs: number, examples: number): Promise<Row[]> {
  const rows: Row[] = [];
  const folder = mkdtempSync(join(tmpdir(), 'rrl-vs-torch-sup-data-'));
  for (let seed = 1; seed <= runs; seed++) {
    const input = specFor(c, seed, examples);
    const n = c.y.length;
    const { train, val } = engineSplit(input, n);
    const enc = c.raw ? encode(c.raw, c.y, c.classes, train) : null;
    const x = enc ? enc.x : c.x!;
    let torch = null;
    if (!('skip' in ref)) {
      const file = join(folder, `${seed}.json`);
      const raw = c.raw?.map((col) => ({ ...col, values: col.values.map((v) => (typeof v === 'number' && Number.isNaN(v) ? null : v)) }));
      const job = { x, y: c.y, train, val, batch: 64, examples, epochs: 500, lr: 1e-3, hidden: c.hidden, classes: c.classes, activation: 'relu' };
      writeFileSync(file, JSON.stringify({ ...job, raw: raw ?? null, maxLevels: DEFAULT_COLUMN_DECISIONS.maxLevels }));
      log(`vs-torch-supervised: ${c.name}, PyTorch reference, seed ${seed}`);
      torch = runTorch(ref, file, seed);
    }
    log(`vs-torch-supervised: ${c.name}, recursive-rl, seed ${seed}`);
    rows.push({ case: c.name, seed, torch, project: await runProject(input, x, c.y, c.classes, enc ? enc.seconds : null) });
  }
  return rows;
}

/** Medians of one case's runs (wall and CPU seconds) and their ratios (PyTorch / recursive-rl). */
interface Medians {
  torch: { wall: number; cpu: number; encode: number | null } | null;
  project: { wall: number; cpu: number; encode: number | null };
  ratio: { wall: number; cpu: number } | null;
}

/** The medians of one case's runs. */
function medians(rows: Row[]): Medians {
  const of = (sides: Side[]): { wall: number; cpu: number; encode: number | null } => {
    const enc = sides.filter((s) => s.encodeS !== null).map((s) => s.encodeS!);
    return { wall: median(sides.map((s) => s.trainS)), cpu: median(sides.map((s) => s.cpuS)), encode: enc.length ? median(enc) : null };
  };
  const t = rows.filter((r) => r.torch).map((r) => r.torch!);
  const torch = t.length ? of(t) : null;
  const project = of(rows.map((r) => r.project));
  return { torch, project, ratio: torch ? { wall: torch.wall / project.wall, cpu: torch.cpu / project.cpu } : null };
}

const secs = (v: number | null | undefined): string => (v === null || v === undefined ? '' : num(v, 3));
const both = (wall: number, cpu: number): string => `${secs(wall)} (${secs(cpu)})`;

/** The printed table: every run, then each case's medians. */
function print(rows: Row[], byCase: Record<string, Medians>): void {
  const ratio = (wall: number, cpu: number): string => `${num(wall, 2)}× (${num(cpu, 2)}×)`;
  const lines = rows.map((r) => [
    r.case,
    String(r.seed),
    r.torch ? both(r.torch.trainS, r.torch.cpuS) : 'skipped',
    both(r.project.trainS, r.project.cpuS),
    r.torch ? ratio(r.torch.trainS / r.project.trainS, r.torch.cpuS / r.project.cpuS) : '',
    r.torch ? num(r.torch.accuracy, 3) : '',
    num(r.project.accuracy, 3),
    r.torch?.encodeS !== null && r.torch?.encodeS !== undefined ? `${secs(r.torch.encodeS)} (diff ${num(r.torch.encodeDiff, 7)})` : '',
    secs(r.project.encodeS),
  ]);
  for (const [name, m] of Object.entries(byCase)) {
    const t = m.torch;
    const p = m.project;
    lines.push([
      name,
      'median',
      t ? both(t.wall, t.cpu) : 'skipped',
      both(p.wall, p.cpu),
      m.ratio ? ratio(m.ratio.wall, m.ratio.cpu) : '—',
      '',
      '',
      secs(t?.encode),
      secs(p.encode),
    ]);
  }
  const head = ['case', 'seed', 'PyTorch train s (CPU s)', 'recursive-rl train s (CPU s)', 'ratio wall (CPU)', 'PyTorch val acc', 'recursive-rl val acc'];
  console.log(table([...head, 'PyTorch encode s', 'recursive-rl encode s'], lines));
}

/** The side-by-side benchmark of supervised training. */
export async function vsTorchSupervised(): Promise<Record<string, unknown>> {
  const examples = Number(process.env.RRL_VS_TORCH_SUP_EXAMPLES ?? 150_000);
  const runs = Number(process.env.RRL_VS_TORCH_SUP_RUNS ?? 5);
  const ref = findReference();
  if ('skip' in ref) log(`vs-torch-supervised: ${ref.skip}; running the project alone`);
  const rows: Row[] = [];
  const byCase: Record<string, Medians> = {};
  for (const c of [spirals(10_000), mixedTable(5_000)]) {
    const caseRows = await runCase(c, ref, runs, examples);
    rows.push(...caseRows);
    byCase[c.name] = medians(caseRows);
  }
  print(rows, byCase);
  return { examples, runs: rows, medians: byCase, skipped: 'skip' in ref ? ref.skip : null, target: 10 };
}

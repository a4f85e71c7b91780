/**
 * `npm run bench -- sensitivity`: what one decision of the design space does, family by family.
 * For every supervised task drawn from the named families it trains the task's baseline spec (as
 * the controller writes it: `specWriter` on the baseline's own choice) and every spec one decision
 * away from it (each other option of each head), scores each on the hidden evaluation and prints,
 * per family, the mean change of the normalised score and on how many tasks it rose. A decision
 * whose sign agrees across the train families is one a prior learned on them can carry to a
 * family never seen; one whose sign flips between them is not (docs/transfer.md).
 *
 * Options (after `--`): `--families=tabular:12,synthetic:6,…` (the default: every supervised
 * family, train and held out, 12 tasks of `tabular` and 6 of the others, family seed 1),
 * `--workers=2`, `--seed=7` (the jobs' training seed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '../src/inner/train.js';
import { validateSpec } from '../src/inner/spec-check.js';
import { dataForJob } from '../src/outer/scoring/hidden-score.js';
import { Scorer } from '../src/outer/scoring/scorer-pool.js';
import { buildHeads } from '../src/outer/agents/space.js';
import { baselineChoice, specWriter } from '../src/outer/agents/controller.js';
import { FAMILIES, registerFamilyTasks } from '../src/tasks/families/index.js';
import { getPublicTask } from '../src/tasks/briefs.js';
import type { TaskBrief } from '../src/spec/brief.js';
import type { JobSpecInput } from '../src/spec/schema.js';
import { num, table } from '../src/cli/format.js';

const log = (s: string): boolean => process.stderr.write(`${s}\n`);
const DEFAULT_FAMILIES = 'tabular:12,synthetic:6,blobs:6,friedman:6,vega-more:6,counts:6,rings:6';

/** Runs `jobs` with at most `n` at once. */
async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]();
      }
    }),
  );
  return out;
}

export async function sensitivity(): Promise<Record<string, unknown>> {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const draws = (opt('families') ?? DEFAULT_FAMILIES).split(',').map((d) => {
    const [family, count] = d.split(':');
    if (!FAMILIES[family]) throw new Error(`--families: unknown family "${family}"; known: ${Object.keys(FAMILIES).join(', ')}`);
    return { family, count: Number(count ?? 6) };
  });
  const workers = Number(opt('workers') ?? 2);
  const seed = Number(opt('seed') ?? 7);
  const scorer = new Scorer({ workers });
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-bench-sensitivity-'));
  let jobCount = 0;
  const score = async (id: string, brief: TaskBrief, spec: JobSpecInput): Promise<number | null> => {
    const checked = validateSpec(spec, brief);
    if (!checked.ok) return null;
    const dir = join(tmp, `job-${jobCount++}`);
    try {
      await runJob(spec, brief, { outDir: dir, data: dataForJob(id, checked.spec) });
      const s = await scorer.score(id, dir);
      return s.ok ? s.score.normalized : null;
    } catch {
      return null;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  // deltas[family][change] = the score changes on the family's tasks
  const deltas: Record<string, Record<string, number[]>> = {};
  const t0 = performance.now();
  try {
    for (const { family, count } of draws) {
      const d: Record<string, number[]> = (deltas[family] = {});
      for (const task of registerFamilyTasks(family, count, 1)) {
        const id = task.def.id;
        const { brief } = getPublicTask(id);
        if (brief.kind !== 'supervised') throw new Error(`sensitivity: ${family} is not a supervised family`);
        const heads = buildHeads(brief);
        const base = baselineChoice(brief, heads);
        if (!base) throw new Error(`sensitivity: ${id} has no baseline spec`);
        const write = specWriter(brief, heads, seed);
        const changes = heads.flatMap((h, i) =>
          h.options
            .map((o, k) => ({ name: `${h.name} = ${JSON.stringify(o)}`, choice: base.map((b, j) => (j === i ? k : b)), same: k === base[i] }))
            .filter((c) => !c.same),
        );
        const [b, ...scores] = await pool([() => score(id, brief, write(base)), ...changes.map((c) => () => score(id, brief, write(c.choice)))], workers);
        if (b === null) throw new Error(`sensitivity: the baseline spec of ${id} failed`);
        changes.forEach((c, i) => {
          const s = scores[i];
          if (s !== null) (d[c.name] ??= []).push(s - b);
        });
        log(`sensitivity: ${id}: baseline ${num(b)}, ${changes.length} changes`);
      }
    }
  } finally {
    scorer.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  const families = Object.keys(deltas);
  const names = [...new Set(families.flatMap((f) => Object.keys(deltas[f])))].sort();
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const cell = (xs: number[] | undefined): string =>
    xs?.length ? `${mean(xs) >= 0 ? '+' : ''}${mean(xs).toFixed(3)} (${xs.filter((x) => x > 0.005).length}/${xs.length})` : '–';
  const split = (f: string): string => (FAMILIES[f].split === 'train' ? 'train' : 'held out');
  console.log('\nMean change of the normalised hidden score when one decision of the baseline spec changes (tasks where it rose / tasks):\n');
  console.log(
    table(
      ['change', ...families.map((f) => `${f} (${split(f)})`)],
      names.map((n) => [n, ...families.map((f) => cell(deltas[f][n]))]),
    ),
  );
  const wallSeconds = (performance.now() - t0) / 1000;
  log(`sensitivity: ${jobCount} jobs in ${wallSeconds.toFixed(0)} s`);
  return {
    families: draws,
    seed,
    jobs: jobCount,
    wallSeconds,
    changes: Object.fromEntries(names.map((n) => [n, Object.fromEntries(families.map((f) => [f, deltas[f][n] ?? []]))])),
  };
}

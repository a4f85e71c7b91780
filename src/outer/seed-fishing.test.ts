/**
 * The seed-fishing attack: an agent that never writes a better job — it sends back the task's
 * baseline spec with only its seed changed, or with one number moved by a millionth — must earn
 * nothing. On every built-in task trained in this process and one draw of every task family, at
 * least 200 proposals of each agent, the mean outer reward must stay within ±0.02 of 0 and the
 * bonus must go to fewer than 5% of the proposals.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskBrief } from '../spec/brief.js';
import { getPublicTask, listTasks } from '../tasks/briefs.js';
import { FAMILIES, generateFamilyTasks } from '../tasks/families/index.js';
import { LocalExecutor } from '../run/local.js';
import { Store } from '../store/store.js';
import { type Proposal, type ProposalContext, StatelessAgent } from './agents/types.js';
import { type TrainConfig, trainAgent } from './loop.js';

/** The baseline spec with a fresh seed: nothing else changes. */
class SeedFisher extends StatelessAgent {
  readonly name = 'seed-fisher';
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    return { spec: { ...structuredClone(getPublicTask(brief.id).baseline), seed: 1 + ctx.rng.int(2 ** 31 - 2) }, trace: null };
  }
}

/** The first positive non-integer number of the spec's algorithm, moved by k · 1e-6 of itself. */
function nudged(spec: Record<string, unknown>, k: number): Record<string, unknown> {
  const out = structuredClone(spec);
  const algorithm = out.algorithm as Record<string, unknown>;
  const field = Object.keys(algorithm).find((f) => typeof algorithm[f] === 'number' && (algorithm[f] as number) > 0 && !Number.isInteger(algorithm[f]));
  if (!field) throw new Error(`${String(out.task)}: no number to nudge in the algorithm`);
  algorithm[field] = (algorithm[field] as number) * (1 + k * 1e-6);
  return out;
}

/** The baseline spec (its own seed) with one number moved by a millionth or a few. */
class Nudger extends StatelessAgent {
  readonly name = 'nudger';
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    return { spec: nudged(getPublicTask(brief.id).baseline as Record<string, unknown>, 1 + ctx.rng.int(999)), trace: null };
  }
}

// Built-in tasks trained by outside programs (Gymnasium through Python, a PyTorch trainer) take
// minutes a job; they are measured by `npm run bench -- noise`, not here.
const tasks = listTasks()
  .filter((t) => !t.brief.id.startsWith('gym-') && t.brief.id !== 'inverted-pendulum-torch')
  .map((t) => t.brief.id);
const families = Object.keys(FAMILIES).map((family) => ({ family, count: 1, seed: 1 }));
// One cache for both agents: the baseline jobs (the same specs) train once.
const cacheDir = mkdtempSync(join(tmpdir(), 'rrl-fishing-cache-'));
const generated = families.flatMap((f) => generateFamilyTasks(f.family, f.count, f.seed));
const familyTasks = generated.map((t) => t.def.id);

/** The control tasks (jobs of seconds) get one proposal per iteration, the supervised ones (jobs of a fraction of a second) five. */
const GROUPS = { control: 1, supervised: 5 } as const;
const ITERATIONS = 3;

/** A proposal's task, outer reward and bonus. */
interface Paid {
  task: string;
  reward: number;
  bonus: number;
}

/** Runs `agent` over `tasks` with `group` proposals per task and iteration; returns the proposals' rewards and bonuses. */
async function fish(agent: StatelessAgent, tasks: string[], group: number, cache: string): Promise<{ rows: Paid[]; confirmations: number }> {
  const config: TrainConfig = { tasks, agent: 'baseline', iterations: ITERATIONS, group, seed: 7, reward: { rule: 'improvement', lambda: 0.5 }, families };
  const dir = mkdtempSync(join(tmpdir(), `rrl-fishing-${agent.name}-`));
  const executor = new LocalExecutor({ workers: 2 });
  try {
    await trainAgent(dir, config, executor, { agent, cache, noiseFile: null });
  } finally {
    await executor.close();
  }
  const store = new Store(dir);
  try {
    const rows = store.db.prepare("SELECT j.task, r.reward, r.detail FROM jobs j JOIN rewards r ON r.job_id = j.id WHERE j.kind = 'proposal'").all() as {
      task: string;
      reward: number;
      detail: string;
    }[];
    const confirmations = (store.db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'confirm'").get() as { n: number }).n;
    return { rows: rows.map((r) => ({ task: r.task, reward: r.reward, bonus: (JSON.parse(r.detail) as { bonus: number }).bonus })), confirmations };
  } finally {
    store.close();
  }
}

const kindOf = (task: string): 'control' | 'supervised' => {
  const t = generated.find((g) => g.def.id === task);
  return t ? (t.kind === 'supervised' ? 'supervised' : 'control') : getPublicTask(task).brief.kind;
};

for (const agent of [new SeedFisher(), new Nudger()]) {
  test(`seed fishing: ${agent.name} earns a mean outer reward within ±0.02 of 0 and the bonus on fewer than 5% of its proposals`, async () => {
    const all = [...tasks, ...familyTasks];
    const rows: Paid[] = [];
    let confirmations = 0;
    for (const kind of ['control', 'supervised'] as const) {
      const got = await fish(
        agent,
        all.filter((t) => kindOf(t) === kind),
        GROUPS[kind],
        join(cacheDir, 'cache.db'),
      );
      rows.push(...got.rows);
      confirmations += got.confirmations;
    }
    assert.ok(rows.length >= 200, `${rows.length} proposals`);
    const mean = rows.reduce((a, r) => a + r.reward, 0) / rows.length;
    const bonuses = rows.filter((r) => r.bonus > 0).length;
    const byTask = [...new Set(rows.map((r) => r.task))].map((t) => {
      const mine = rows.filter((r) => r.task === t);
      return `${t} ${(mine.reduce((a, r) => a + r.reward, 0) / mine.length).toFixed(3)}`;
    });
    const report = `${agent.name}: ${rows.length} proposals on ${all.length} tasks, mean outer reward ${mean.toFixed(4)}, ${bonuses} bonus(es), ${confirmations} confirmation job(s); mean per task: ${byTask.join(', ')}`;
    console.log(report);
    assert.ok(Math.abs(mean) <= 0.02, report);
    assert.ok(bonuses < 0.05 * rows.length, report);
  });
}

/**
 * `npm run bench -- rung-rank`: does a low rung rank a task's proposals as the full budget does?
 * Successive halving (`rrl train --fidelity asha`) keeps the best of each group by their scores on
 * a share of the budget; that is only as good as the agreement between those scores and the
 * full-budget ones. Per task, this trains the embedded controller with `rrl train`'s loop at the
 * full budget (the fidelity bench's full-budget arm: `--iterations` of `--group` proposals), then
 * trains every proposal that succeeded again as the rung job of each `--shares` share (the spec a
 * rung trains, `rungSpec`: its budget cut by the harness, control jobs with `stopWhenFlat`), and
 * prints per share:
 * - the Spearman rank correlation of the rung's scores with the full-budget ones, over all the
 *   task's proposals (a failed rung job ranks last);
 * - per group (one iteration's proposals), the regret of keeping the rung's best: the group's best
 *   full-budget score minus the full-budget score of the proposal the rung ranks first (what eta
 *   ≥ the group size keeps), its mean over groups, and in how many groups it is 0 (within 0.01);
 * - the highest score at the rung, against the highest at the full budget.
 *
 * Options (after `--`): `--tasks=pendulum-swingup,acrobot-swingup` (the default), `--seed=1`,
 * `--iterations=6`, `--group=9`, `--shares=1/27,1/9,1/3` (fractions or decimals), `--workers=2`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { num, table } from '../src/cli/format.js';
import { validateSpec } from '../src/inner/spec-check.js';
import { rungSpec } from '../src/outer/fidelity.js';
import { trainAgent } from '../src/outer/loop.js';
import { LocalExecutor } from '../src/run/local.js';
import { Store } from '../src/store/store.js';
import { getPublicTask } from '../src/tasks/briefs.js';
import { ScriptedAgent } from '../src/testing/scripted-agent.js';
import { spearman } from '../src/util/rank-correlation.js';

const log = (s: string): boolean => process.stderr.write(`${s}\n`);

/** A share written as a fraction (`1/27`) or a decimal, in (0, 1). */
function parseShare(s: string): number {
  const m = /^(\d+)\/(\d+)$/.exec(s);
  const v = m ? Number(m[1]) / Number(m[2]) : Number(s);
  if (!(v > 0 && v < 1)) throw new Error(`--shares: "${s}" is not a share of the budget in (0, 1), for example 1/9`);
  return v;
}

/** The succeeded proposals of a finished run: spec, group (iteration) and full-budget score. */
function proposalsOf(dir: string): { spec: unknown; group: number; full: number }[] {
  const store = new Store(dir);
  try {
    const run = store.getRun()!;
    return store
      .jobs(run.id, { kind: 'proposal' })
      .filter((j) => j.status === 'succeeded' && j.normalized !== null)
      .map((j) => ({ spec: j.spec, group: j.round, full: j.normalized as number }));
  } finally {
    store.close();
  }
}

/** Scores of `specs` trained as given (one group of the scripted agent), in order; null: not succeeded. */
async function scoresOf(dir: string, task: string, specs: unknown[], executor: LocalExecutor): Promise<(number | null)[]> {
  const script = specs.map((s) => () => s);
  await trainAgent(dir, { tasks: [task], agent: 'random', iterations: 1, group: specs.length, seed: 1, confirm: false }, executor, {
    agent: new ScriptedAgent(script),
    cache: null,
  });
  const store = new Store(dir);
  try {
    const rows = store.jobs(store.getRun()!.id, { kind: 'proposal' }).sort((a, b) => a.slot - b.slot);
    return rows.map((j) => (j.status === 'succeeded' ? j.normalized : null));
  } finally {
    store.close();
  }
}

export async function rungRank(): Promise<Record<string, unknown>> {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const tasks = (opt('tasks') ?? 'pendulum-swingup,acrobot-swingup').split(',');
  const seed = Number(opt('seed') ?? 1);
  const iterations = Number(opt('iterations') ?? 6);
  const group = Number(opt('group') ?? 9);
  const shareArgs = (opt('shares') ?? '1/27,1/9,1/3').split(',');
  const shares = shareArgs.map(parseShare);
  const executor = new LocalExecutor({ workers: Number(opt('workers') ?? 2) });
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-bench-rung-rank-'));
  const rows: Record<string, unknown>[] = [];
  try {
    for (const task of tasks) {
      const brief = getPublicTask(task).brief;
      const runDir = join(tmp, `${task}-full`);
      await trainAgent(runDir, { tasks: [task], agent: 'controller', iterations, group, seed }, executor, { cache: null });
      const proposals = proposalsOf(runDir);
      const full = proposals.map((p) => p.full);
      log(`rung-rank: ${task}: ${proposals.length} proposals at the full budget, best ${num(Math.max(...full))}`);
      for (const [k, share] of shares.entries()) {
        const specs = proposals.map((p) => {
          const checked = validateSpec(p.spec, brief);
          if (!checked.ok) throw new Error(`rung-rank: a proposal that succeeded does not validate: ${checked.error.message}`);
          return rungSpec(p.spec, checked.spec, brief, share);
        });
        const rung = await scoresOf(join(tmp, `${task}-${k}`), task, specs, executor);
        const low = Math.min(...rung.filter((v): v is number => v !== null), 0) - 1;
        const ranked = rung.map((v) => v ?? low);
        const regrets = [...new Set(proposals.map((p) => p.group))].map((g) => {
          const mine = proposals.map((p, i) => ({ ...p, i })).filter((p) => p.group === g);
          const pick = mine.reduce((a, b) => (ranked[b.i] > ranked[a.i] ? b : a));
          return Math.max(...mine.map((p) => p.full)) - pick.full;
        });
        const row = {
          task,
          share: shareArgs[k],
          spearman: spearman(ranked, full),
          meanRegret: regrets.reduce((a, b) => a + b, 0) / regrets.length,
          groupsWithoutRegret: regrets.filter((r) => r <= 0.01).length,
          groups: regrets.length,
          bestAtRung: Math.max(...ranked),
          bestAtFull: Math.max(...full),
        };
        rows.push(row);
        log(`rung-rank: ${task} at ${row.share}: Spearman ${num(row.spearman)}, mean regret ${num(row.meanRegret)}`);
      }
    }
  } finally {
    await executor.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  log(
    table(
      [
        'task',
        'rung share',
        'Spearman with the full budget',
        "mean regret of the rung's pick",
        'groups without regret',
        'best at the rung',
        'best at the full budget',
      ],
      rows.map((r) => [
        String(r.task),
        String(r.share),
        num(r.spearman as number | null),
        num(r.meanRegret as number),
        `${r.groupsWithoutRegret} of ${r.groups}`,
        num(r.bestAtRung as number),
        num(r.bestAtFull as number),
      ]),
    ),
  );
  return { tasks, seed, iterations, group, rows };
}

/**
 * `npm run bench -- crash`: the kill-anywhere run (DESIGN boundary 5). `rrl train` is killed with
 * SIGKILL at 20 seeded random moments and resumed each time; prints the kills (per phase), the
 * jobs finished, lost and rerun, the resumes that failed and the wall time. The same harness as
 * src/outer/crash.test.ts (src/testing/crash.ts). `RRL_CRASH_SEED` picks other moments.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRASH_RUN, killAnywhere } from '../src/testing/crash.js';
import { num, table } from '../src/cli/format.js';

/** The crash benchmark. */
export async function crash(): Promise<Record<string, unknown>> {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-crash-'));
  const seed = Number(process.env.RRL_CRASH_SEED ?? 1);
  const c = CRASH_RUN;
  process.stderr.write(
    `crash: rrl train --tasks ${c.tasks} --agent ${c.agent} --iterations ${c.iterations} --group ${c.group} --seed ${c.seed} --workers ${c.workers}, 20 kills (kill seed ${seed})\n`,
  );
  const r = await killAnywhere({
    dir: join(tmp, 'killed'),
    referenceDir: join(tmp, 'uninterrupted'),
    kills: 20,
    seed,
    log: (l) => process.stderr.write(`crash: ${l}\n`),
  });
  const phases = Object.entries(r.killsByPhase)
    .map(([p, n]) => `${p} ${n}`)
    .join(', ');
  console.log(
    table(
      ['figure', 'value'],
      [
        ['kills (SIGKILL)', r.kills],
        ['kills per phase', phases],
        ['resumes (--resume)', r.resumes],
        ['restarts before the run was recorded', r.restarts],
        ['resumes that failed', r.resumesFailed],
        ['jobs finished / jobs', `${r.jobsFinished} / ${r.jobs}`],
        ['finished jobs watched across kills', r.jobsWatched],
        ['finished jobs lost', r.lost.length],
        ['finished jobs rerun', r.rerun.length],
        ['incomplete or inconsistent', r.incomplete.length],
        ['differences from the uninterrupted run', r.differences.length],
        ['uninterrupted run wall s', num(r.referenceSeconds, 1)],
        ['killed-and-resumed run wall s', num(r.crashSeconds, 1)],
      ],
    ),
  );
  for (const line of [...r.failures, ...r.lost, ...r.rerun, ...r.incomplete, ...r.differences]) process.stderr.write(`crash: ${line}\n`);
  const { final: _final, reference: _reference, ...figures } = r;
  return { seed, ...figures };
}

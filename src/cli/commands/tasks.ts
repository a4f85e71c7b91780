/** `rrl tasks`: the tasks (with their training noise), or the task families. */
import type { Command } from 'commander';
import { listTasks } from '../../tasks/briefs.js';
import { FAMILIES, registerFamilyTasks } from '../../tasks/families/index.js';
import { table } from '../format.js';
import { measureNoise, measuredNoise, noiseCell } from '../noise.js';
import { useTaskDir } from '../task-dir.js';
import { int } from '../flags/parse.js';
import { FAMILY_HELP, familyFlags, taskDirFlag } from '../flags/shared.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const TASKS_FLAGS = flagTable({
  json: { flag: '--json', help: 'one JSON array on stdout' },
  taskDir: taskDirFlag(),
  ...familyFlags(FAMILY_HELP, 'seed of the family draws'),
  families: { flag: '--families', help: 'list the task families instead (name, kind, split, what varies)' },
  measureNoise: {
    flag: '--measure-noise',
    help: "train every listed task's baseline spec on the harness's 5 seeds where the noise table has no record, then list",
  },
  workers: { flag: '--workers <n>', help: 'worker threads for --measure-noise (default: one per core)', parse: int(1, 256) },
});

/** Lists the task families. */
function listFamilies(json: boolean): void {
  const fams = Object.values(FAMILIES).map((f) => ({ name: f.name, kind: f.kind, split: f.split, description: f.description }));
  if (json) console.log(JSON.stringify(fams));
  else
    console.log(
      table(
        ['family', 'kind', 'split', 'what varies'],
        fams.map((f) => [f.name, f.kind, f.split, f.description]),
      ),
    );
}

/** Registers `rrl tasks` on `program`. */
export function registerTasksCommand(program: Command): void {
  const cmd = program.command('tasks').description('list the tasks');
  addFlags(cmd, TASKS_FLAGS).action(async (o: FlagValues<typeof TASKS_FLAGS>) => {
    if (o.families) return listFamilies(Boolean(o.json));
    await useTaskDir(o.taskDir);
    for (const d of o.family ?? []) registerFamilyTasks(d.family, d.count, o.familySeed);
    if (o.measureNoise) {
      const missing = listTasks()
        .map((t) => t.brief.id)
        .filter((id) => !measuredNoise().records.has(id));
      if (missing.length) await measureNoise(missing, o.workers, (line) => process.stderr.write(`${line}\n`));
    }
    const { records, problem } = measuredNoise();
    if (problem) process.stderr.write(`${problem}\n`);
    const rows = listTasks().map(({ brief: b }) => {
      const n = records.get(b.id);
      const noise = n ? { seeds: n.seeds, mean: n.mean, sd: n.sd, spread: n.spread, evalSe: n.evalSe } : null;
      return { id: b.id, family: b.family, kind: b.kind, split: b.split, data: b.data, noise };
    });
    if (o.json) console.log(JSON.stringify(rows));
    else {
      const head = ['id', 'family', 'kind', 'split', 'data', 'title', 'training noise (baseline over harness seeds)'];
      console.log(
        table(
          head,
          listTasks().map(({ brief: b }) => [b.id, b.family, b.kind, b.split, b.data, b.title, noiseCell(records.get(b.id))]),
        ),
      );
      if (rows.some((r) => !r.noise)) {
        process.stderr.write(
          'noise not measured yet for some tasks: `rrl tasks --measure-noise` measures it (every `rrl train` run also records what it measured)\n',
        );
      }
    }
  });
}

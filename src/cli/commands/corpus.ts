/** `rrl corpus tasks`: the tasks built from the real-table corpus, per split, and every drop by reason. */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { corpusBuild } from '../../tasks/corpus/build.js';
import { CORPUS_SPLITS, type CorpusSplit } from '../../tasks/corpus/splits.js';
import { type CorpusSummary, corpusSummary } from '../../tasks/corpus/summary.js';
import { corpusDir } from '../../tasks/corpus/where.js';
import { table } from '../format.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const CORPUS_TASKS_FLAGS = flagTable({
  split: {
    flag: '--split <split>',
    help: `only this split's tasks (${CORPUS_SPLITS.join(', ')})`,
    parse: (v: string): CorpusSplit => {
      if (!(CORPUS_SPLITS as readonly string[]).includes(v)) throw new InvalidArgumentError(`--split must be one of ${CORPUS_SPLITS.join(', ')}, got "${v}"`);
      return v as CorpusSplit;
    },
  },
  json: { flag: '--json', help: 'the counts and the tasks as one JSON object on stdout' },
  list: { flag: '--list', help: 'list the tasks too (id, split, kind, metric, rows, features)' },
});

/** The counts in words and tables. */
function printSummary(s: CorpusSummary): void {
  const t = s.total;
  console.log(
    `corpus ${s.dir}: ${s.tables} tables → ${t.tasks} tasks${s.split === 'all' ? '' : ` in split ${s.split}`} from ${t.packages} packages ` +
      `(${t.classification} classification, ${t.regression} regression; ${t.perPackage.min}–${t.perPackage.max} per package; ` +
      `${t.counted.tasks} tasks from the ${t.counted.packages} packages with at least 3); ` +
      `${s.subsampled} tables subsampled to the row cap`,
  );
  console.log(
    table(
      ['split', 'tasks', 'packages', 'classification', 'regression'],
      Object.entries(s.splits).map(([k, v]) => [k, v.tasks, v.packages, v.classification, v.regression]),
    ),
  );
  console.log(
    table(
      ['dropped', 'count'],
      Object.entries(s.drops).map(([k, v]) => [k, v]),
    ),
  );
}

/** Registers `rrl corpus` and its subcommand `tasks` on `program`. */
export function registerCorpusCommand(program: Command): void {
  const corpus = program.command('corpus').description('the real-table corpus (python/fetch-corpus.sh builds it; RRL_CORPUS points elsewhere)');
  const cmd = corpus.command('tasks').description('build the tasks of the corpus and print how many, per split, and every drop by reason');
  addFlags(cmd, CORPUS_TASKS_FLAGS).action(async (o: FlagValues<typeof CORPUS_TASKS_FLAGS>) => {
    const build = await corpusBuild(corpusDir());
    const summary = corpusSummary(build, o.split ?? 'all');
    const tasks = build.tasks.filter((t) => !o.split || t.split === o.split);
    const rows = tasks.map((t) => {
      const d = t.def.load();
      return { id: t.id, split: t.split, package: t.package, item: t.item, kind: d.kind, metric: t.def.metric, rows: d.y.length, features: d.features.length };
    });
    if (o.json) return console.log(JSON.stringify({ ...summary, tasks: rows }));
    printSummary(summary);
    if (o.list)
      console.log(
        table(
          ['id', 'split', 'kind', 'metric', 'rows', 'features'],
          rows.map((r) => [r.id, r.split, r.kind, r.metric, r.rows, r.features]),
        ),
      );
  });
}

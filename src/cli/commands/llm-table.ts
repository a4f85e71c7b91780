/** `rrl experiment llm-table`: the language model's held-out table from `python -m rrl_client.heldout`'s evaluations. */
import type { Command } from 'commander';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type HeldoutFile, llmTable, llmTableMarkdown, replaceTable, TABLE_MARKERS } from '../../outer/llm-table.js';
import { repeatable } from '../flags/parse.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const LLM_TABLE_FLAGS = flagTable({
  heldout: {
    flag: '--heldout <label=dir>',
    help: "an evaluation: LABEL=DIR, DIR holding rrl_client.heldout's heldout.json (repeatable)",
    parse: repeatable,
    required: true,
  },
  pair: {
    flag: '--pair <comparison>',
    help: 'a comparison paired by task, "TERM - TERM", a term being LABEL/ARM[+LABEL/ARM…][:metric] (metric default greedy_confirmed; repeatable)',
    parse: repeatable,
  },
  term: { flag: '--term <term>', help: 'a term shown without a comparison (repeatable)', parse: repeatable },
  doc: { flag: '--doc <file>', help: `write the table into FILE between ${TABLE_MARKERS.begin} and ${TABLE_MARKERS.end}` },
  json: { flag: '--json', help: 'print the table as one JSON object' },
});

/** Reads each `LABEL=DIR`'s heldout.json; a missing or unreadable one is a one-line error. */
function readEvaluations(specs: string[]): Record<string, HeldoutFile> {
  const files: Record<string, HeldoutFile> = {};
  for (const spec of specs) {
    const at = spec.indexOf('=');
    if (at <= 0) throw new Error(`--heldout ${spec}: expected LABEL=DIR`);
    const label = spec.slice(0, at);
    const path = join(resolve(spec.slice(at + 1)), 'heldout.json');
    if (!existsSync(path)) throw new Error(`--heldout ${label}: no ${path} (run python -m rrl_client.heldout --out DIR first)`);
    const data = JSON.parse(readFileSync(path, 'utf8')) as HeldoutFile;
    if (!Array.isArray(data.tasks) || typeof data.arms !== 'object' || data.arms === null)
      throw new Error(`--heldout ${label}: ${path} is not a held-out evaluation`);
    files[label] = data;
  }
  return files;
}

/** The command's action: prints the table (or its JSON) and writes it into `--doc`. */
function printTable(o: FlagValues<typeof LLM_TABLE_FLAGS>): void {
  const table = llmTable(readEvaluations(o.heldout ?? []), o.pair ?? [], o.term ?? []);
  const md = llmTableMarkdown(table);
  if (o.doc) writeFileSync(o.doc, replaceTable(readFileSync(o.doc, 'utf8'), md));
  if (o.json) console.log(JSON.stringify(table));
  else process.stdout.write(md);
}

/** Registers `rrl experiment llm-table` on the `experiment` command. */
export function registerLlmTableCommand(experiment: Command): void {
  const cmd = experiment
    .command('llm-table')
    .description(
      "the language model's held-out table: terms' means over tasks and comparisons paired by task with 90% intervals, from rrl_client.heldout's evaluations",
    );
  addFlags(cmd, LLM_TABLE_FLAGS).action(printTable);
}

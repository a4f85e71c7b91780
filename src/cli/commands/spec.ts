/** `rrl spec --json-schema [--grammar [TASK]]`: the job spec's JSON Schema. */
import type { Command } from 'commander';
import { jobSpecJsonSchema } from '../../spec/schema.js';
import { grammarSchema } from '../../spec/grammar-schema.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const SPEC_FLAGS = flagTable({
  jsonSchema: { flag: '--json-schema', help: 'print the JSON Schema the agent writes against (draft 2020-12)' },
  grammar: {
    flag: '--grammar [task]',
    help: 'with --json-schema: the grammar form structured output sends (plain features; narrowed to TASK when given)',
  },
});

/** Registers `rrl spec` on `program`. */
export function registerSpecCommand(program: Command): void {
  const cmd = program.command('spec').description('the job spec schema');
  addFlags(cmd, SPEC_FLAGS).action((o: FlagValues<typeof SPEC_FLAGS>) => {
    if (!o.jsonSchema) {
      console.error('use `rrl spec --json-schema` to print the job spec JSON Schema');
      process.exitCode = 2;
      return;
    }
    if (o.grammar === undefined) console.log(JSON.stringify(jobSpecJsonSchema(), null, 2));
    else console.log(JSON.stringify(grammarSchema(typeof o.grammar === 'string' ? getPublicTask(o.grammar).brief : undefined), null, 2));
  });
}

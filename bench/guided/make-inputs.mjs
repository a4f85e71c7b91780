// Inputs of python/rrl_client/bench_guided.py, from the compiled harness (`npx tsc -p tsconfig.json` first):
// per task, the patch schema (grammarSchema(brief) less `task` and every `required`, what
// GET /v1/tasks/{id}/schema?form=patch serves) and the compact prompt's messages.
//   node bench/guided/make-inputs.mjs penguins-species cars-mpg > bench/guided/inputs.json
import { grammarSchema } from '../../dist/src/spec/grammar-schema.js';
import { getPublicTask } from '../../dist/src/tasks/briefs.js';
import { buildPrompt } from '../../dist/src/outer/agents/prompt.js';

function patchForm(n) {
  if (Array.isArray(n)) return n.map(patchForm);
  if (n === null || typeof n !== 'object') return n;
  const out = {};
  for (const [k, v] of Object.entries(n)) {
    if (k === 'required') continue;
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, patchForm(s)])) : patchForm(v);
  }
  return out;
}

const out = {};
for (const id of process.argv.slice(2)) {
  const t = getPublicTask(id);
  const patch = patchForm(grammarSchema(t.brief));
  delete patch.properties.task;
  out[id] = { patchSchema: patch, messages: buildPrompt(t.brief, { compact: true, example: t.baseline }) };
}
console.log(JSON.stringify(out, null, 1));

/**
 * The model card that travels beside an exported model (`card.json`, and `card.md` for people):
 * which job made it, on what task and data, how it scored on the hidden evaluation, what it cost,
 * and the input contract `rrl predict` and any ONNX Runtime user feed it by. This file owns the
 * card's shape; `rrl predict` reads it back through `readCard`.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** The format tag of `card.json`. */
export const CARD_FORMAT = 'rrl-model-card/1';
/** The model's file name beside the card. */
export const MODEL_FILE = 'model.onnx';

const ColumnInputSchema = z.strictObject({
  name: z.string().min(1).max(1000),
  kind: z.enum(['numeric', 'categorical']),
  missing: z.boolean(),
  levels: z.array(z.string().max(1000)).max(100_000).optional(),
  /** What the column means, as the task's brief says. */
  description: z.string().max(4000).optional(),
});

const OutputSchema = z.strictObject({
  name: z.string().min(1).max(200),
  type: z.enum(['double', 'int64', 'string']),
  shape: z.array(z.union([z.number().int(), z.string()])).max(4),
  meaning: z.string().max(2000),
});

const num = z.number().nullable();

/** The shape of `card.json`. */
export const ModelCardSchema = z.strictObject({
  format: z.literal(CARD_FORMAT),
  model: z.string(),
  task: z.strictObject({
    id: z.string(),
    kind: z.enum(['classification', 'regression', 'control']),
    /** A classifier's classes, in the order of its probabilities. */
    classes: z.array(z.string()).nullable(),
    metric: z.string().nullable(),
    title: z.string().nullable(),
  }),
  job: z.strictObject({ run: z.string().nullable(), id: z.number().int().nullable(), kind: z.string().nullable(), agent: z.string().nullable() }),
  spec: z.unknown(),
  data: z.strictObject({ fingerprint: z.string().nullable() }),
  score: z.strictObject({
    raw: num,
    normalized: num,
    stderr: num,
    confirmed: z.strictObject({ normalized: num, uncertainty: num, seeds: z.number().int(), failed: z.number().int() }).nullable(),
    baseline: num,
  }),
  cost: z.strictObject({ wallSeconds: num, cpuSeconds: num, examples: num, envSteps: num }),
  inputs: z.union([z.array(ColumnInputSchema).max(2000), z.strictObject({ observation: z.number().int().positive() })]),
  outputs: z.array(OutputSchema).min(1).max(8),
  versions: z.record(z.string(), z.string()),
  exportedAt: z.string(),
});

/** A model card. */
export type ModelCard = z.infer<typeof ModelCardSchema>;

/** Reads and checks `card.json`; a missing, unreadable or ill-shaped card is an error in one line. */
export function readCard(path: string): ModelCard {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new Error(e.code === 'ENOENT' ? `${path}: no model card here (rrl export model writes one beside ${MODEL_FILE})` : `${path}: ${e.message}`);
  }
  const r = ModelCardSchema.safeParse(parsed);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new Error(`${path}: not a model card this version reads (${issue.path.join('.') || 'card'}: ${issue.message})`);
  }
  return r.data;
}

const fmt = (v: number | null, digits = 3): string => (v === null ? '—' : v.toFixed(digits));

/** The card for people: what the model is, its score and cost, and how to feed it. */
export function cardMarkdown(c: ModelCard): string {
  const s = c.score;
  const confirmed = s.confirmed
    ? `${fmt(s.confirmed.normalized)} ± ${fmt(s.confirmed.uncertainty)} over ${s.confirmed.seeds} retrainings of the spec on the harness's seeds`
    : 'not confirmed (the spec was trained once; its score holds the luck of one seed)';
  const inputs = Array.isArray(c.inputs)
    ? c.inputs.map((i) => {
        const levels = i.levels ? ` (${i.levels.length} levels: ${i.levels.slice(0, 8).join(', ')}${i.levels.length > 8 ? ', …' : ''})` : '';
        const empty = i.missing ? (i.kind === 'numeric' ? 'NaN' : '""') : 'not accepted';
        return `| \`${i.name}\` | ${i.kind === 'numeric' ? 'double' : 'string'} [N] | ${empty} | ${i.kind}${levels} | ${i.description ?? ''} |`;
      })
    : [`| \`observation\` | double [N, ${c.inputs.observation}] | not accepted | vector | raw observations, one row per state |`];
  return [
    `# Model card: ${c.task.title ?? c.task.id}`,
    '',
    `A ${c.task.kind} model exported by recursive-rl ${c.versions['recursive-rl'] ?? ''} from job ${c.job.id ?? '—'} of run ${c.job.run ?? '—'} (${c.job.kind ?? 'job'}, agent ${c.job.agent ?? '—'}).`,
    '',
    '## Hidden evaluation',
    '',
    `- This model: normalised ${fmt(s.normalized)} ± ${fmt(s.stderr)} (raw ${fmt(s.raw, 4)}${c.task.metric ? `, ${c.task.metric}` : ''}); 0 is the trivial predictor, 1 the task's reference.`,
    `- Its spec, confirmed: ${confirmed}.`,
    `- The task's baseline spec: ${fmt(s.baseline)}.`,
    '',
    '## Cost',
    '',
    `${fmt(c.cost.wallSeconds, 1)} s wall, ${fmt(c.cost.cpuSeconds, 1)} s CPU; ${c.cost.examples ?? 0} examples, ${c.cost.envSteps ?? 0} environment steps.`,
    '',
    '## Inputs',
    '',
    '| input | type | empty cell | kind | meaning |',
    '| --- | --- | --- | --- | --- |',
    ...inputs,
    '',
    '## Outputs',
    '',
    '| output | type | meaning |',
    '| --- | --- | --- |',
    ...c.outputs.map((o) => `| \`${o.name}\` | ${o.type} [${o.shape.join(', ')}] | ${o.meaning} |`),
    '',
    `Data fingerprint (sha256): \`${c.data.fingerprint ?? 'unknown'}\`. Versions: ${Object.entries(c.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    '',
  ].join('\n');
}

/**
 * The transfer experiment's report (`transfer.md`): the outer learning curve, the held-out tables
 * per task and per family with their spreads, the verdicts, per secret and per repetition, and the
 * same on confirmed scores. A pure function of the experiment's figures; experiment.ts runs it.
 */
import { CONFIRMED_ROWS } from './confirm-picks.js';
import { CONFIRM_SEEDS } from './noise.js';
import type { RewardRuleName } from './reward.js';
import { type PairedDifference, pairedVerdict } from '../util/paired-difference.js';
import {
  type FamilyCounts,
  type FamilyRow,
  type HeldOutRow,
  type HeldOutSummary,
  METHODS,
  PAIRED_AGAINST,
  VERDICTS,
  type Verdict,
  familyOf,
} from './transfer-summary.js';
import { FAMILIES } from '../tasks/families/index.js';
import { AIMS, AIM_SEARCHES, LEVEL_MARGIN, aimsByFamily, hasAims } from './transfer-aims.js';

type Means = Omit<HeldOutRow, 'task'>;

/** One repetition (a seed under a secret) as the report reads it. */
export interface ReportRepetition {
  seed: number;
  secret: number;
  evalId: string;
  heldOut: Means;
  confirmed: { heldOut: Means; rows: HeldOutRow[] } | null;
  /** Seconds it took over every invocation, and whether this invocation read it back finished. */
  wallSeconds?: number;
  readBack?: boolean;
}

/** What the report is written from. */
export interface ReportInput {
  options: {
    trainTasks: string[];
    heldOutTasks: string[];
    iterations: number;
    group: number;
    seed: number;
    tasksPerIteration?: number;
    reward?: { rule: RewardRuleName; lambda: number };
    prior?: string | null;
    compare?: string;
    corpus?: unknown;
  };
  /** The prior's description when the run started from one (no meta-training), else null. */
  prior: string | null;
  curve: { iteration: number; meanReward: number; meanNormalized: number | null; bestNormalized: number | null }[];
  summary: HeldOutSummary;
  secrets: { secret: number; evalId: string; heldOut: Means; verdict: Verdict & { families: FamilyCounts } }[];
  confirmed: (HeldOutSummary & { secrets: { secret: number; heldOut: Means; verdict: Verdict & { families: FamilyCounts } }[] }) | null;
  perSeed: ReportRepetition[];
  notes: string[];
  wallSeconds: number;
  nSeeds: number;
  nSecrets: number;
}

/** The verdicts with the family counts beside them. */
type FamilyVerdict = Verdict & { families: FamilyCounts };

/** A score with three decimals, or a dash where there is none. */
const fmt = (v: number | null): string => (v === null ? '—' : v.toFixed(3));

/** A comparison's outcome in words. */
const yes = (b: boolean | null): string => (b === null ? 'not run' : b ? 'yes' : 'no');

/** A difference with its sign (a minus sign, not a hyphen, below 0) and three decimals. */
const signed = (v: number): string => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(3)}`;

/** A table's header row and rule, one column per name. */
function tableHead(columns: string[]): string[] {
  return [`| ${columns.join(' | ')} |`, `| ${columns.map(() => '---').join(' | ')} |`];
}

/** The labels of `methods`, as table columns. */
const labels = (methods: typeof METHODS | typeof VERDICTS): string[] => methods.map(([, label]) => label);

/** The tasks in words: hand-written ones by id, generated ones counted per family. */
function describeTasks(tasks: string[]): string {
  const counts = new Map<string, number>();
  for (const t of tasks) counts.set(familyOf(t), (counts.get(familyOf(t)) ?? 0) + 1);
  return [...counts].map(([f, n]) => (FAMILIES[f] ? `${n} ${f} tasks` : f)).join(', ');
}

/** When repetitions were read back finished: how many, and the minutes they took over every invocation. */
function readBackNote(reps: ReportRepetition[]): string {
  const back = reps.filter((r) => r.readBack);
  if (!back.length) return '';
  const ran = back.reduce((a, r) => a + (r.wallSeconds ?? 0), 0) / 60;
  return (
    ` (this invocation; ${back.length} of ${reps.length} repetitions had finished before and were read back from their repetition.json: ` +
    `they took ${ran.toFixed(1)} min in all)`
  );
}

/** A repetition's name: it is one seed under one secret, and with one of either, it is named by the other. */
function repetitionName(input: ReportInput, r: ReportRepetition): string {
  return [input.nSecrets > 1 ? `secret ${r.secret + 1}` : '', input.nSeeds > 1 || input.nSecrets === 1 ? `seed ${r.seed}` : ''].filter(Boolean).join(', ');
}

/** The methods with a score on some row: a method the comparison left out gets no column. */
function methodsRun(rows: HeldOutRow[], methods = METHODS): typeof METHODS {
  return methods.filter(([k]) => rows.some((r) => r[k] !== null));
}

/** The means row of a table: each method's mean, with its spread over repetitions when there are several. */
function meansRow(methods: typeof METHODS, heldOut: Means, spread: Means, many: boolean): string {
  return `| **mean** | ${methods.map(([k]) => `**${fmt(heldOut[k])}**${many && spread[k] !== null ? ` ± ${fmt(spread[k])}` : ''}`).join(' | ')} |`;
}

/** What was run: the meta-training (or the prior), the held-out tasks, the wall time, the seeds and secrets. */
function headerSection(input: ReportInput): string[] {
  const { options, prior, secrets, perSeed, wallSeconds, nSecrets } = input;
  const perIteration = options.tasksPerIteration ? ` (${Math.min(options.tasksPerIteration, options.trainTasks.length)} tasks per iteration)` : '';
  const lambda = options.reward?.rule === 'cost' ? ` (λ ${options.reward.lambda})` : '';
  return [
    `# Transfer experiment`,
    '',
    prior
      ? `Meta-training: none in this run; the controller starts from the prior \`${options.prior}\`: ${prior}.`
      : `Meta-training: ${describeTasks(options.trainTasks)}; ${options.iterations} iterations × ${options.group} proposals per task${perIteration}; ` +
        `outer reward \`${options.reward?.rule ?? 'improvement'}\`${lambda}.`,
    `Held out: ${describeTasks(options.heldOutTasks)}. Wall time ${(wallSeconds / 60).toFixed(1)} min${readBackNote(perSeed)}.`,
    perSeed.length > 1
      ? `Seeds ${[...new Set(perSeed.map((r) => r.seed))].join(', ')}` +
        (nSecrets > 1 ? ` under ${nSecrets} evaluation secrets (${secrets.map((x) => x.evalId).join(', ')}; the installation's first)` : '') +
        `: every figure is the mean over the ${perSeed.length} repetitions; ± is the standard deviation of the per-repetition means.`
      : `Seed ${options.seed}, evaluation secret ${perSeed[0].evalId}.`,
    '',
  ];
}

/** The outer learning curve on the train tasks (none from a prior). */
function curveSection(input: ReportInput): string[] {
  return [
    '## Outer learning curve (train tasks)',
    '',
    ...(input.prior
      ? ['None: this run did not meta-train (the prior’s own run has the curve).']
      : [
          '| iteration | mean outer reward | mean normalised score | best normalised score |',
          '| --- | --- | --- | --- |',
          ...input.curve.map((p) => `| ${p.iteration + 1} | ${fmt(p.meanReward)} | ${fmt(p.meanNormalized)} | ${fmt(p.bestNormalized)} |`),
        ]),
    '',
  ];
}

/** Each held-out task's row and the means, after the notes of what did not run. */
function heldOutSection(input: ReportInput): string[] {
  const { rows, heldOut, spread } = input.summary;
  const methods = methodsRun(rows);
  return [
    '## Held-out tasks (normalised hidden score)',
    '',
    ...input.notes.map((n) => `**${n}**\n`),
    ...tableHead(['task', ...labels(methods)]),
    ...rows.map((r) => `| ${r.task} | ${methods.map(([k]) => fmt(r[k])).join(' | ')} |`),
    meansRow(methods, heldOut, spread, input.perSeed.length > 1),
    '',
  ];
}

/** Per family: the means, their spreads and the verdicts (`which` names the scores in the headings). */
function familySections(fams: FamilyRow[], v: FamilyVerdict, which: string, methods = METHODS): string[] {
  return [
    `## Held-out families${which} (mean over their tasks and seeds)`,
    '',
    ...tableHead(['family', 'tasks', ...labels(methods)]),
    ...fams.map((r) => `| ${r.task} | ${r.tasks} | ${methods.map(([k]) => fmt(r[k])).join(' | ')} |`),
    '',
    `Spread per family: the standard deviation over the family's tasks (of each task's mean over seeds) / over seeds (of the family's mean in each seed).`,
    '',
    ...tableHead(['family', ...labels(methods)]),
    ...fams.map((r) => `| ${r.task} | ${methods.map(([k]) => `${fmt(r.taskSpread[k])} / ${fmt(r.seedSpread[k])}`).join(' | ')} |`),
    '',
    `## Verdict per held-out family${which}`,
    '',
    ...tableHead(['family', ...labels(VERDICTS)]),
    ...fams.map((r) => `| ${r.task} | ${VERDICTS.map(([k]) => yes(r.verdict[k])).join(' | ')} |`),
    `| **families where it holds** | ${VERDICTS.map(([k]) => `**${v.families[k]} of ${v.families.heldOutFamilies}**`).join(' | ')} |`,
    '',
  ];
}

/** A paired difference: its mean, its 90% interval and where that lies. */
function pairedCell(d: PairedDifference | null | undefined): string {
  if (!d) return '—';
  return d.lo === null || d.hi === null ? signed(d.mean) : `${signed(d.mean)} [${signed(d.lo)}, ${signed(d.hi)}] ${pairedVerdict(d)}`;
}

/** The zero-shot job paired by task with each compared row, per family and on all held-out tasks. */
function pairedSection(p: HeldOutSummary['paired'], v: FamilyVerdict, which: string): string[] {
  const against = PAIRED_AGAINST.filter((k) => [...p.families, p.all].some((c) => c.vs[k]));
  const label = (k: (typeof PAIRED_AGAINST)[number]): string => METHODS.find(([m]) => m === k)?.[1] ?? k;
  return [
    `## Zero-shot against each search, paired by task${which}`,
    '',
    "Zero-shot minus the row, the mean over the tasks (each task's mean over the repetitions: seeds and secrets) with its 90% Student-t interval over tasks: " +
      '**above** or **below** where the interval lies wholly on one side of 0, **level** where the tasks’ spread cannot tell the two apart.',
    '',
    // Not tableHead: with no row to pair, the header keeps its empty column.
    `| family | tasks | ${against.map((k) => `vs ${label(k)}`).join(' | ')} |`,
    `| --- | --- | ${against.map(() => '---').join(' | ')} |`,
    ...[...p.families, p.all].map(
      (c) => `| ${c.family === 'all' ? '**all held-out tasks**' : c.family} | ${c.tasks} | ${against.map((k) => pairedCell(c.vs[k])).join(' | ')} |`,
    ),
    '',
    p.all.notBelowEveryBest16 === null
      ? "- zero-shot against every search's best of 16: not run (the model-based search did not run, or too few tasks for an interval)"
      : `- zero-shot not below any search's best of 16 beyond the noise (no interval wholly below 0) in **${p.notBelowEveryBest16} of ${p.families.length}** ` +
        `held-out families, and on all held-out tasks: **${p.all.notBelowEveryBest16 ? 'yes' : 'no'}**; at least level on the means, without the noise ` +
        `(the verdict above): ${v.families.zeroShotAtLeastEveryBest16} of ${v.families.heldOutFamilies} families`,
    '',
  ];
}

/** The comparisons, on the mean of all held-out tasks and counted over families. */
function verdictLines(v: FamilyVerdict, h: Means, reps: { name: string; heldOut: Means }[]): string[] {
  const families = v.families;
  return [
    `- controller zero-shot beats random search's best of 4 in every seed: **${yes(v.zeroShotBeatsRandom4EverySeed)}** ` +
      `(${reps.map((r) => `${r.name}: ${fmt(r.heldOut.zeroShot)} vs ${fmt(r.heldOut.randomBest4)}`).join('; ')})`,
    `- controller best of 16 (adapting) at least level with model-based search's best of 16: **${yes(v.adaptBest16AtLeastSearchBest16)}** ` +
      `(${fmt(h.controllerAdaptBest16)} vs ${fmt(h.searchBest16)})`,
    `- zero-shot at least level with both searches' best of 16: **${yes(v.zeroShotAtLeastBothBest16)}** ` +
      `(${fmt(h.zeroShot)} vs ${fmt(h.randomBest16)} random, ${fmt(h.searchBest16)} search)`,
    `- by family, zero-shot at least level with random search's best of 16 in **${families.zeroShotAtLeastRandomBest16} of ${families.heldOutFamilies}** ` +
      `held-out families, with the model-based search's in **${families.zeroShotAtLeastSearchBest16} of ${families.heldOutFamilies}**, ` +
      `with both in **${families.zeroShotAtLeastBothBest16} of ${families.heldOutFamilies}**`,
    `- zero-shot at least level with every search's best of 16 (Optuna's included): **${yes(v.zeroShotAtLeastEveryBest16)}** on the mean, ` +
      `in **${families.zeroShotAtLeastEveryBest16} of ${families.heldOutFamilies}** held-out families`,
  ];
}

/** The verdict on all held-out tasks, and with several secrets, each secret's means and verdicts. */
function verdictSection(input: ReportInput): string[] {
  const { verdict, heldOut } = input.summary;
  return [
    '## Verdict',
    '',
    ...verdictLines(
      verdict,
      heldOut,
      input.perSeed.map((r) => ({ name: repetitionName(input, r), heldOut: r.heldOut })),
    ),
    '',
    ...(input.nSecrets > 1
      ? [
          '## Verdict per evaluation secret',
          '',
          ...tableHead(['secret', ...labels(METHODS), ...labels(VERDICTS)]),
          ...input.secrets.map(
            (x) =>
              `| ${x.secret + 1} (${x.evalId}) | ${METHODS.map(([k]) => fmt(x.heldOut[k])).join(' | ')} | ` +
              `${VERDICTS.map(([k]) => `${yes(x.verdict[k])}, ${x.verdict.families[k]} of ${x.verdict.families.heldOutFamilies} families`).join(' | ')} |`,
          ),
          '',
        ]
      : []),
  ];
}

/** Under each secret alone, the confirmed zero-shot against random search's best of 4 and every search's best of 16. */
function confirmedSecretLines(confirmed: NonNullable<ReportInput['confirmed']>): string[] {
  return confirmed.secrets.map((x) => {
    const families = x.verdict.families;
    return (
      `- under secret ${x.secret + 1}: zero-shot ${fmt(x.heldOut.zeroShot)}, random search's best of 4 ${fmt(x.heldOut.randomBest4)}; ` +
      (x.verdict.zeroShotAtLeastEveryBest16 === null
        ? "the comparison with every search's best of 16 not run"
        : `at least level with every search's best of 16 in ${families.zeroShotAtLeastEveryBest16} of ${families.heldOutFamilies} families`)
    );
  });
}

/** The whole comparison again on confirmed scores, in the rows confirmed and the baseline (none without `confirmPicks`). */
function confirmedSection(input: ReportInput): string[] {
  const { confirmed } = input;
  if (!confirmed) return [];
  const methods = methodsRun(
    confirmed.rows,
    METHODS.filter(([k]) => k === 'baseline' || CONFIRMED_ROWS.some((r) => r.key === k)),
  );
  const which = ', confirmed scores';
  const reps = input.perSeed.map((r) => ({
    name: repetitionName(input, r),
    heldOut: (r.confirmed as NonNullable<ReportRepetition['confirmed']>).heldOut,
  }));
  return [
    '## On confirmed scores',
    '',
    `Each compared row's pick (its best of 16, the controller's best of 4, random search's best of 4, the zero-shot spec) trained again on the harness's ${CONFIRM_SEEDS} ` +
      'confirmation seeds, and scored by its mean: what the pick is worth when it is trained again, without the luck of the seed it was picked on. ' +
      'The other best-of-4 rows are not confirmed; the baseline spec is a mean over the harness seeds already.',
    '',
    ...tableHead(['task', ...labels(methods)]),
    ...confirmed.rows.map((r) => `| ${r.task} | ${methods.map(([k]) => fmt(r[k])).join(' | ')} |`),
    meansRow(methods, confirmed.heldOut, confirmed.spread, input.perSeed.length > 1),
    '',
    ...familySections(confirmed.families, confirmed.verdict, which, methods),
    ...pairedSection(confirmed.paired, confirmed.verdict, which),
    '## Verdict, confirmed scores',
    '',
    ...verdictLines(confirmed.verdict, confirmed.heldOut, reps),
    ...(input.nSecrets > 1 ? confirmedSecretLines(confirmed) : []),
    '',
  ];
}

/** One aim's difference: the mean and 90 % interval, as the paired tables give it. */
const aimCell = (d: PairedDifference | null | undefined): string => pairedCell(d);

/** The aims of the corpus presets (`transfer-aims.ts`) on `rows`, per package and on all compared tasks. */
function aimsTable(rows: HeldOutRow[], which: string): string[] {
  const aims = aimsByFamily(rows);
  return [
    `## Aims on real domains, paired by task${which}`,
    '',
    `Differences with their 90% intervals over tasks; "at least level" allows the interval down to ${LEVEL_MARGIN}, "above" needs it wholly above 0. ` +
      'A package with one task has no interval and is not judged (—).',
    '',
    ...tableHead([
      'package',
      'tasks',
      ...AIM_SEARCHES.map((k) => `zero-shot − ${METHODS.find(([m]) => m === k)?.[1]}`),
      'zero-shot − baseline',
      'zero-shot − reference prior',
      ...AIM_SEARCHES.map((k) => `best of 4 − ${METHODS.find(([m]) => m === k)?.[1]}`),
      ...AIMS.map(([, label]) => label),
    ]),
    ...aims.map(
      (a) =>
        `| ${a.family === 'all' ? '**all compared tasks**' : a.family} | ${a.tasks} | ${AIM_SEARCHES.map((k) => aimCell(a.zeroShot[k])).join(' | ')} | ` +
        `${aimCell(a.zeroShot.baseline)} | ${aimCell(a.zeroShot.priorZeroShot)} | ${AIM_SEARCHES.map((k) => aimCell(a.best4[k])).join(' | ')} | ` +
        `${AIMS.map(([k]) => (a[k] === null ? '—' : a[k] ? 'yes' : 'no')).join(' | ')} |`,
    ),
    '',
  ];
}

/** The aims on confirmed scores (and on single scores), on corpus tasks or with the corpus presets' comparison. */
function aimsSection(input: ReportInput): string[] {
  if (!hasAims(input.options)) return [];
  return [...(input.confirmed ? aimsTable(input.confirmed.rows, ', confirmed scores') : []), ...aimsTable(input.summary.rows, ', single scores')];
}

/** With several repetitions, each one's held-out means, overall and per family. */
function perRepetitionSection(input: ReportInput): string[] {
  const { perSeed } = input;
  if (perSeed.length <= 1) return [];
  const name = (r: ReportRepetition): string => repetitionName(input, r);
  return [
    '## Held-out means per repetition',
    '',
    ...tableHead(['repetition', ...labels(METHODS)]),
    ...perSeed.map((r) => `| ${name(r)} | ${METHODS.map(([k]) => fmt(r.heldOut[k])).join(' | ')} |`),
    '',
    '## Held-out families per repetition (mean over their tasks)',
    '',
    ...tableHead(['family', 'repetition', ...labels(METHODS)]),
    ...input.summary.families.flatMap((f) => f.perSeed.map((m, i) => `| ${f.task} | ${name(perSeed[i])} | ${METHODS.map(([k]) => fmt(m[k])).join(' | ')} |`)),
    '',
  ];
}

/** The report's markdown. */
export function transferMarkdown(input: ReportInput): string {
  const { summary } = input;
  return [
    ...headerSection(input),
    ...curveSection(input),
    ...heldOutSection(input),
    ...familySections(summary.families, summary.verdict, '', methodsRun(summary.rows)),
    ...aimsSection(input),
    ...pairedSection(summary.paired, summary.verdict, ''),
    ...verdictSection(input),
    ...confirmedSection(input),
    ...perRepetitionSection(input),
  ].join('\n');
}

/** The counts of a corpus build, as `rrl corpus tasks` prints them and docs/corpus.md records them. */
import type { CorpusBuild, CorpusTask } from './build.js';
import { CORPUS_SPLITS, type CorpusSplit } from './splits.js';

/** The counts of one split (or of all). */
export interface SplitCounts {
  tasks: number;
  packages: number;
  classification: number;
  regression: number;
  /** Packages with at least 3 tasks, and their tasks. */
  counted: { packages: number; tasks: number };
  /** Tasks per package: the fewest and the most. */
  perPackage: { min: number; max: number };
}

/** A build's counts. */
export interface CorpusSummary {
  dir: string;
  /** Tables in the manifest (reserved ones refused and not counted). */
  tables: number;
  /** The split shown (`all`: every split). */
  split: CorpusSplit | 'all';
  total: SplitCounts;
  splits: Record<CorpusSplit, SplitCounts>;
  /** Drops by reason: `table: …` counts tables, `task: …` candidate tasks. */
  drops: Record<string, number>;
  subsampled: number;
}

/** The counts of some tasks. */
export function splitCounts(tasks: CorpusTask[]): SplitCounts {
  const per = new Map<string, number>();
  for (const t of tasks) per.set(t.package, (per.get(t.package) ?? 0) + 1);
  const counts = [...per.values()];
  const classification = tasks.filter((t) => t.def.metric === 'accuracy' || t.def.metric === 'macro-f1').length;
  return {
    tasks: tasks.length,
    packages: per.size,
    classification,
    regression: tasks.length - classification,
    counted: { packages: counts.filter((k) => k >= 3).length, tasks: counts.filter((k) => k >= 3).reduce((a, k) => a + k, 0) },
    perPackage: { min: counts.length ? Math.min(...counts) : 0, max: counts.length ? Math.max(...counts) : 0 },
  };
}

/** The summary of a build, for one split or all. */
export function corpusSummary(build: CorpusBuild, split: CorpusSplit | 'all' = 'all'): CorpusSummary {
  const shown = split === 'all' ? build.tasks : build.tasks.filter((t) => t.split === split);
  const splits = Object.fromEntries(CORPUS_SPLITS.map((s) => [s, splitCounts(build.tasks.filter((t) => t.split === s))])) as Record<CorpusSplit, SplitCounts>;
  const drops = Object.fromEntries(Object.entries(build.drops).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
  return { dir: build.dir, tables: build.tables, split, total: splitCounts(shown), splits, drops, subsampled: build.subsampled };
}

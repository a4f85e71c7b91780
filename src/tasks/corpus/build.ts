/**
 * Builds the corpus's tasks, in named phases, every drop counted by reason: the manifest (reserved
 * tables refused), tables too small for a hidden test set of 50 rows, each table's target
 * candidates tried in the rule's order until two tasks are made (features chosen, the dataset
 * coded, the hidden test set large enough, no feature solving it alone), then the copies removed
 * by content fingerprint (of another corpus table, or of a built-in or family table), then each
 * package's split. Deterministic: the same corpus gives the same tasks. Memoised per directory
 * and thread (`corpusBuild`).
 */
import { loadAirports, loadCars, loadGapminder, loadIris, loadJobs, loadMovies, loadPenguins, loadPopulation } from '../../inner/data/index.js';
import { loadSeattleWeather, loadTwoCityWeather, loadUnemployment } from '../../inner/data/index.js';
import { testRows } from '../supervised/define.js';
import type { SupervisedTaskDef } from '../supervised/define.js';
import { type ContentPrint, contentPrint, datasetPrint, dedupe } from './content.js';
import { capRows, codeDataset } from './dataset.js';
import { corpusTaskDef, MIN_TEST_ROWS, TEST_FRACTION } from './define.js';
import { parseDoc, type TableDoc } from './doc.js';
import { chooseFeatures } from './features.js';
import { profile } from './profile.js';
import { type ManifestEntry, type RawTable, readCorpusDoc, readCorpusTable, readManifest } from './read.js';
import { oneFeatureSolves } from './solve.js';
import { type CorpusSplit, packageSplit } from './splits.js';
import { MAX_TARGETS, targetCandidates, targetOrder } from './target.js';
import type { Dataset } from '../../spec/data.js';

/** Fewest rows of a table: a hidden test set of `MIN_TEST_ROWS` at `TEST_FRACTION` needs them. */
export const MIN_TABLE_ROWS = Math.ceil((MIN_TEST_ROWS - 0.5) / TEST_FRACTION);
/** Most columns of a table: a brief lists every feature. */
export const MAX_TABLE_COLUMNS = 100;
/** Fewest features of a task. */
export const MIN_FEATURES = 2;

/** One task built from the corpus. */
export interface CorpusTask {
  id: string;
  package: string;
  item: string;
  target: string;
  split: CorpusSplit;
  /** The Parquet file's sha256 from the manifest. */
  sha256: string;
  def: SupervisedTaskDef;
}

/** What a build made and left out. */
export interface CorpusBuild {
  dir: string;
  /** Tables in the manifest (reserved ones not counted). */
  tables: number;
  tasks: CorpusTask[];
  /** Drops by reason: `table: …` counts tables, `task: …` counts candidate tasks. */
  drops: Record<string, number>;
  /** Tables subsampled to the row cap. */
  subsampled: number;
}

/** A task made from a table before copies are removed. */
interface Made {
  entry: ManifestEntry;
  target: string;
  dataset: Dataset;
  doc: TableDoc;
}

/** The fingerprints of the built-in and family tables a corpus table must not copy. */
export function builtInPrints(): ContentPrint[] {
  const loads = {
    penguins: loadPenguins,
    cars: loadCars,
    'seattle-weather': loadSeattleWeather,
    iris: loadIris,
    gapminder: loadGapminder,
    movies: loadMovies,
    'two-city-weather': loadTwoCityWeather,
    airports: loadAirports,
    population: loadPopulation,
    unemployment: loadUnemployment,
    jobs: loadJobs,
  };
  return Object.entries(loads).map(([name, load]) => datasetPrint(`built-in ${name}`, load()));
}

class Drops {
  readonly counts: Record<string, number> = {};
  add(reason: string, n = 1): void {
    this.counts[reason] = (this.counts[reason] ?? 0) + n;
  }
}

/** Phase 2: the tasks of one table, its candidates tried in order until `MAX_TARGETS` are made. */
function tableTasks(table: RawTable, entry: ManifestEntry, doc: TableDoc, drops: Drops): Made[] {
  const profiles = table.columns.map(profile);
  const candidates = targetOrder(targetCandidates(profiles, doc));
  if (candidates.length === 0) drops.add('table: no column fits the target rule');
  const made: Made[] = [];
  for (const target of candidates) {
    if (made.length >= MAX_TARGETS) break;
    const { features } = chooseFeatures(table, profiles, target.column, target.kind);
    if (features.length < MIN_FEATURES) {
      drops.add(`task: fewer than ${MIN_FEATURES} features after exclusions`);
      continue;
    }
    const coded = codeDataset(`${entry.package}::${entry.item}::${target.column}`, table, target, features, doc);
    if ('drop' in coded) {
      drops.add(`task: ${coded.drop}`);
      continue;
    }
    if (testRows(coded, TEST_FRACTION) < MIN_TEST_ROWS) {
      drops.add(`task: fewer than ${MIN_TEST_ROWS} hidden test rows`);
      continue;
    }
    if (oneFeatureSolves(coded)) {
      drops.add('task: one feature solves it');
      continue;
    }
    made.push({ entry, target: target.column, dataset: coded, doc });
  }
  return made;
}

/** Phase 3: the tables that copy another (or a built-in) left out, with their tasks; preference: more rows, more columns, then the name. */
function withoutCopies(made: Made[], prints: Map<string, ContentPrint>, drops: Drops): Made[] {
  const order = [...prints.keys()].map((k) => made.find((m) => `${m.entry.package}::${m.entry.item}` === k)!.entry);
  order.sort((a, b) => b.rows - a.rows || b.columns - a.columns || `${a.package}::${a.item}`.localeCompare(`${b.package}::${b.item}`));
  const dropped = dedupe(
    order.map((e) => prints.get(`${e.package}::${e.item}`)!),
    builtInPrints(),
  );
  return made.filter((m) => {
    const copied = dropped.get(`${m.entry.package}::${m.entry.item}`);
    if (copied === undefined) return true;
    drops.add(copied.startsWith('built-in ') ? 'task: its table copies a built-in or family table' : 'task: its table copies another corpus table');
    return false;
  });
}

/** Phase 1: one table read and capped, or why not: too few rows or too many columns (told by the manifest before it is read), unreadable. */
async function readTable(dir: string, entry: ManifestEntry): Promise<RawTable | string> {
  if (entry.rows < MIN_TABLE_ROWS) return `table: fewer than ${MIN_TABLE_ROWS} rows`;
  if (entry.columns > MAX_TABLE_COLUMNS) return `table: more than ${MAX_TABLE_COLUMNS} columns`;
  try {
    return capRows(await readCorpusTable(dir, entry));
  } catch {
    return 'table: its Parquet file cannot be read';
  }
}

/** The corpus task of a made task (`id` given: the id the full build gave it). */
function corpusTask(m: Made, id?: string): CorpusTask {
  const split = packageSplit(m.entry.package);
  const made = corpusTaskDef({ package: m.entry.package, item: m.entry.item, target: m.target, split, dataset: m.dataset, doc: m.doc });
  const def = id && id !== made.id ? { ...made, id, baseline: { ...made.baseline, task: id } } : made;
  return { id: def.id, package: m.entry.package, item: m.entry.item, target: m.target, split, sha256: m.entry.sha256, def };
}

/** Builds every task of the corpus in `dir`. */
export async function buildCorpus(dir: string): Promise<CorpusBuild> {
  const manifest = readManifest(dir);
  const drops = new Drops();
  if (manifest.reserved) drops.add('table: reserved for independent evaluation (refused)', manifest.reserved);
  const made: Made[] = [];
  const prints = new Map<string, ContentPrint>();
  let subsampled = 0;
  for (const entry of manifest.tables) {
    const table = await readTable(dir, entry);
    if (typeof table === 'string') {
      drops.add(table);
      continue;
    }
    if (table.rows < entry.rows) subsampled++;
    const doc = parseDoc(
      readCorpusDoc(dir, entry),
      table.columns.map((c) => c.name),
    );
    const tasks = tableTasks(table, entry, doc, drops);
    if (tasks.length) prints.set(`${entry.package}::${entry.item}`, contentPrint(`${entry.package}::${entry.item}`, table.columns));
    made.push(...tasks);
  }
  const kept = withoutCopies(made, prints, drops);
  return { dir, tables: manifest.tables.length, tasks: uniqueIds(kept.map((m) => corpusTask(m))), drops: drops.counts, subsampled };
}

/**
 * One task of the corpus built from its table alone, as the full build made it (`id`, `target`):
 * what a scorer thread needs to score it, without reading the rest of the corpus. Null when the
 * table no longer makes it.
 */
export async function buildCorpusTask(dir: string, want: { id: string; package: string; item: string; target: string }): Promise<CorpusTask | null> {
  const entry = readManifest(dir).tables.find((t) => t.package === want.package && t.item === want.item);
  if (!entry) return null;
  const table = await readTable(dir, entry);
  if (typeof table === 'string') return null;
  const doc = parseDoc(
    readCorpusDoc(dir, entry),
    table.columns.map((c) => c.name),
  );
  const m = tableTasks(table, entry, doc, new Drops()).find((t) => t.target === want.target);
  return m ? corpusTask(m, want.id) : null;
}

/** Task ids made unique: a second task whose words normalise to the same id gets `-2`, and so on. */
function uniqueIds(tasks: CorpusTask[]): CorpusTask[] {
  const used = new Set<string>();
  return tasks.map((t) => {
    let id = t.id;
    for (let k = 2; used.has(id); k++) id = `${t.id}-${k}`;
    used.add(id);
    if (id === t.id) return t;
    return { ...t, id, def: { ...t.def, id, baseline: { ...t.def.baseline, task: id } } };
  });
}

const BUILDS = new Map<string, Promise<CorpusBuild>>();

/** The build of the corpus in `dir`, made once per thread. */
export function corpusBuild(dir: string): Promise<CorpusBuild> {
  let b = BUILDS.get(dir);
  if (!b) {
    b = buildCorpus(dir);
    BUILDS.set(dir, b);
    b.catch(() => BUILDS.delete(dir));
  }
  return b;
}

/**
 * Near-copies of the main file's rows in a user's extra source. The hidden test rows are drawn
 * from the main file; a source row that repeats one of them, even rounded, jittered, reordered,
 * duplicated or with a few columns rescaled, would teach a job the hidden label. This module
 * says which main rows each source row is a near-copy of; the loader drops those of held-out
 * rows once the split is drawn.
 *
 * The rule, in units of the main file's standard deviation per feature (its mean and std):
 * - **every feature**: a source row within `tolerance` of a main row in every feature (the
 *   largest difference, L∞), where `tolerance` is `NEAR_COPY_RATIO` × the median distance from a
 *   main row to its nearest other main row (over distinct rows: exact duplicates in the main
 *   file do not shrink it);
 * - **all but `ignore` features**: the same with the `ignore` largest differences left out, and
 *   a tolerance from the same median under that distance. `ignore` is a quarter of the features
 *   (at least 1, at most `MAX_IGNORE`; tables of 3 features or more), else 1, whichever first
 *   still tells the main rows apart: at most `TRIM_MAX_SHARE` of them gain a neighbour within the tolerance by it (a
 *   table of few distinct values, e.g. one-hot columns, gets none).
 *
 * Both searches are exact and use k-d trees over the distinct main rows (`kd-tree.ts`): one over
 * every feature, and for the second rule one over each of a few feature sets that together
 * leave out any `ignore` features (`featureSets`); where the trees hand back more than half the
 * main rows per query (many features, wide tolerances) every main row is checked instead. The
 * medians come from `SAMPLE` main rows' nearest neighbours among all the others.
 */
import { IntList, KdTree, spaced } from './kd-tree.js';

/** A near-copy lies within this share of the main rows' median nearest-neighbour distance. */
export const NEAR_COPY_RATIO = 0.25;
/** Leaving features out is allowed while at most this share of main rows gains a near neighbour by it. */
export const TRIM_MAX_SHARE = 0.05;
/** The most features the second rule leaves out (its searches take up to 10 trees). */
export const MAX_IGNORE = 3;
/** Past this many features the tolerances come from a scan of every main row rather than the trees. */
export const SCAN_FEATURES = 20;
/** Source rows searched through the trees before `find` decides whether a scan of every main row is cheaper. */
const PROBE = 256;
/** Main rows whose nearest neighbours set the tolerances. */
export const SAMPLE = 256;
/**
 * Main rows kept per source row; a row near more main rows than this is near a held-out one
 * whatever the split. Sources hold at most 2^20 rows (the row limit is 1,000,000).
 */
export const MAX_MATCHES = 32;

/** The distinct rows of a table of numbers, and which distinct row each row is. */
export class DistinctRows {
  /** The distinct rows, in first-seen order. */
  readonly rows: number[][] = [];
  /** `of[i]`: the distinct row of row i. */
  readonly of: Int32Array;
  /** How many rows each distinct row stands for. */
  readonly count: number[] = [];
  private readonly byHash = new Map<number, number[]>();

  constructor(rows: number[][]) {
    this.of = new Int32Array(rows.length);
    rows.forEach((r, i) => {
      let u = this.find(r);
      if (u < 0) {
        u = this.rows.length;
        this.rows.push(r);
        this.count.push(0);
        const h = rowHash(r);
        const list = this.byHash.get(h);
        if (list) list.push(u);
        else this.byHash.set(h, [u]);
      }
      this.count[u]++;
      this.of[i] = u;
    });
  }

  /** The distinct row equal to `row`, or -1. */
  find(row: number[]): number {
    for (const u of this.byHash.get(rowHash(row)) ?? []) if (sameRow(this.rows[u], row)) return u;
    return -1;
  }
}

const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);

/** A 32-bit hash of a row's numbers (their bits; -0 and 0 alike). */
function rowHash(row: number[]): number {
  let h = 0x811c9dc5;
  for (const v of row) {
    bits[0] = v === 0 ? 0 : v;
    h = Math.imul(h ^ words[0], 0x01000193);
    h = Math.imul(h ^ words[1], 0x01000193);
  }
  return h >>> 0;
}

function sameRow(a: number[], b: number[]): boolean {
  for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) return false;
  return true;
}

/** The rule: the main file's scale and the two tolerances, in std units. */
export interface NearCopyRule {
  features: number;
  mean: Float64Array;
  /** The std of each feature (1 for a constant one). */
  std: Float64Array;
  /** Every feature within this. */
  tolerance: number;
  /** All features but `ignore` within `tolerance`; null when leaving features out would not tell main rows apart. */
  trimmed: { ignore: number; tolerance: number } | null;
}

/** Rows standardised with the rule's mean and std, row-major. */
function standardise(rule: NearCopyRule, rows: number[][]): Float64Array {
  const d = rule.features;
  const z = new Float64Array(rows.length * d);
  rows.forEach((r, i) => {
    for (let j = 0; j < d; j++) z[i * d + j] = (r[j] - rule.mean[j]) / rule.std[j];
  });
  return z;
}

/** Coordinate differences between the rows of a query matrix `q` and of the main one `z`, `d` features a row. */
class RowDifferences {
  private readonly scratch: Float64Array;
  constructor(
    private readonly q: Float64Array,
    private readonly z: Float64Array,
    private readonly d: number,
  ) {
    this.scratch = new Float64Array(d);
  }

  /**
   * How many coordinates of query row `qi` and main row `zi` differ by more than `limit`, stopping
   * once that passes `ignore`. At most `ignore` means the rows are within `limit` in all features
   * but `ignore`.
   */
  over(qi: number, zi: number, limit: number, ignore: number): number {
    const { q, z, d } = this;
    const [a, b] = [qi * d, zi * d];
    let n = 0;
    for (let j = 0; j < d; j++) if (Math.abs(q[a + j] - z[b + j]) > limit && ++n > ignore) return n;
    return n;
  }

  /** The (ignore+1)-th largest coordinate difference of two rows: their distance with the `ignore` largest left out. */
  trimmed(qi: number, zi: number, ignore: number): number {
    const { q, z, d, scratch } = this;
    const [a, b] = [qi * d, zi * d];
    for (let j = 0; j < d; j++) scratch[j] = Math.abs(q[a + j] - z[b + j]);
    return kthLargest(scratch, d, ignore);
  }
}

/** The (k+1)-th largest of the first n values of `a` (reorders them). */
function kthLargest(a: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  for (;;) {
    if (lo >= hi) return a[lo];
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The features ordered by how many distinct values the distinct main rows take in them (most first). */
function spreadOrder(z: Float64Array, d: number, count: number): number[] {
  const probe = spaced(count, 4096);
  const values = Array.from({ length: d }, (_, j) => new Set(probe.map((u) => z[u * d + j])).size);
  return values.map((_, j) => j).sort((a, b) => values[b] - values[a] || a - b);
}

/** The subsets of k out of `m` items. */
function choose(m: number, k: number): number[][] {
  if (k === 0) return [[]];
  if (m < k) return [];
  return [...choose(m - 1, k - 1).map((c) => [...c, m - 1]), ...choose(m - 1, k)];
}

/**
 * Feature sets that leave out any `ignore` features: the features are dealt (most spread first)
 * into groups, and each set is every group but `ignore` of them; whichever features a copy
 * changed lie in at most `ignore` groups, so one set holds none of them. Two groups more than
 * `ignore` while that makes at most 10 sets (ignore 1 to 3), else one more.
 */
export function featureSets(order: number[], ignore: number): number[][] {
  if (ignore === 0) return [order];
  const groups = Math.min(order.length, ignore + (choose(ignore + 2, ignore).length <= 10 ? 2 : 1));
  const dealt = Array.from({ length: groups }, (_, g) => order.filter((_, k) => k % groups === g));
  return choose(groups, ignore).map((out) => dealt.filter((_, g) => !out.includes(g)).flat());
}

/** One search of the rule: trees over feature sets, a tolerance and the features left out. */
interface Search {
  trees: KdTree[];
  tolerance: number;
  ignore: number;
}

/** What `find` says: for each source row, the distinct main rows it is a near-copy of. */
export interface NearCopies {
  /** `matches[i]`: the distinct main rows (indices into `DistinctRows.rows`) near source row i; null: near more than `MAX_MATCHES`. */
  matches: (readonly number[] | null)[];
  /** Source rows that are a near-copy of some main row. */
  copies: number;
}

const NONE: readonly number[] = Object.freeze([]);

/** The near-copy rule of a main file and the trees that search its distinct rows. */
export class NearCopyIndex {
  readonly rule: NearCopyRule;
  /** The distinct main rows standardised, laid out leaf by leaf of a tree over every feature (close rows close in memory). */
  private readonly z: Float64Array;
  /** `ids[k]`: the distinct row at position k of `z`. */
  private readonly ids: Int32Array;
  private readonly searches: Search[] = [];

  constructor(readonly distinct: DistinctRows) {
    const rows = distinct.rows;
    const all = distinct.of.length;
    const d = rows[0]?.length ?? 0;
    const mean = new Float64Array(d);
    const std = new Float64Array(d);
    // Over every row of the main file, duplicates counted.
    rows.forEach((r, u) => {
      for (let j = 0; j < d; j++) mean[j] += (r[j] * distinct.count[u]) / all;
    });
    rows.forEach((r, u) => {
      for (let j = 0; j < d; j++) std[j] += ((r[j] - mean[j]) ** 2 * distinct.count[u]) / all;
    });
    for (let j = 0; j < d; j++) std[j] = std[j] > 0 ? Math.sqrt(std[j]) : 1;
    this.rule = { features: d, mean, std, tolerance: 0, trimmed: null };
    const plain = standardise(this.rule, rows);
    this.ids = d > 0 ? Int32Array.from(new KdTree(plain, d, rows.length, [...Array(d).keys()]).points) : new Int32Array(rows.length).map((_, u) => u);
    this.z = new Float64Array(plain.length);
    this.ids.forEach((u, k) => this.z.set(plain.subarray(u * d, (u + 1) * d), k * d));
    if (d === 0) return;
    const order = spreadOrder(this.z, d, rows.length);
    const sample = spaced(rows.length, SAMPLE);
    const trees = (ignore: number): KdTree[] => featureSets(order, ignore).map((dims) => new KdTree(this.z, d, rows.length, dims));
    const full: Search = { trees: trees(0), tolerance: 0, ignore: 0 };
    const nn = this.nearestDistances(full, sample);
    full.tolerance = NEAR_COPY_RATIO * median(nn.filter(Number.isFinite));
    this.rule.tolerance = full.tolerance;
    this.searches.push(full);
    const quarter = Math.min(MAX_IGNORE, Math.max(1, Math.floor(d / 4)));
    for (const ignore of d >= 3 ? [...new Set([quarter, 1])] : []) {
      const search: Search = { trees: trees(ignore), tolerance: 0, ignore };
      const trimmed = this.nearestDistances(search, sample);
      search.tolerance = NEAR_COPY_RATIO * median(trimmed.filter(Number.isFinite));
      const gained = trimmed.filter((t, s) => t <= search.tolerance && !(nn[s] <= full.tolerance)).length;
      if (search.tolerance > 0 && gained <= TRIM_MAX_SHARE * sample.length) {
        this.rule.trimmed = { ignore, tolerance: search.tolerance };
        this.searches.push(search);
        break;
      }
    }
  }

  /**
   * For each sampled distinct row, the distance to its nearest other distinct row with the
   * search's `ignore` features left out: through the trees, or by a scan of every row past
   * `SCAN_FEATURES` features (where trees prune little).
   */
  private nearestDistances(search: Search, sample: number[]): number[] {
    const { z } = this;
    const d = this.rule.features;
    const count = this.ids.length;
    const rows = new RowDifferences(z, z, d);
    return sample.map((s) => {
      const distance = (u: number, best: number): number => (rows.over(s, u, best, search.ignore) > search.ignore ? best : rows.trimmed(s, u, search.ignore));
      if (d > SCAN_FEATURES) {
        let best = Infinity;
        for (let u = 0; u < count; u++) if (u !== s) best = Math.min(best, distance(u, best));
        return best;
      }
      // Each row's distance is at least its largest difference in one of the trees' feature sets.
      return search.trees.reduce((best, tree) => tree.nearest(z, s * d, s, best, distance), Infinity);
    });
  }

  /**
   * The distinct main rows each of `rows` is a near-copy of. `scan`: check every main row for
   * every source row (what the search falls back to when the trees prune little; the same answer).
   */
  find(rows: number[][], scan = false): NearCopies {
    const { z, ids } = this;
    const d = this.rule.features;
    const q = standardise(this.rule, rows);
    const differences = new RowDifferences(q, z, d);
    const seen = new Int32Array(ids.length).fill(-1);
    const box = new IntList();
    const matches = new Array<readonly number[] | null>(rows.length).fill(NONE);
    let copies = 0;
    // Rows in the order of the leaves they fall in: each query meets the tree parts the last one did.
    const full = this.searches[0]?.trees[0];
    const byLeaf = new Float64Array(rows.length);
    for (let i = 0; i < rows.length; i++) byLeaf[i] = (full ? full.leafOf(q, i * d) : 0) * 2 ** 20 + i;
    byLeaf.sort();
    // Once the trees hand back more than half the rows per query on average, every row is checked instead.
    let candidates = 0;
    for (const [n, key] of byLeaf.entries()) {
      const i = key % 2 ** 20;
      let found: number[] | null = null;
      const check = (u: number, tolerance: number, ignore: number): void => {
        if (seen[u] === i || differences.over(i, u, tolerance, ignore) > ignore) return;
        seen[u] = i;
        (found ??= []).push(ids[u]);
      };
      for (const { trees, tolerance, ignore } of this.searches) {
        if (scan) {
          for (let u = 0; u < ids.length; u++) check(u, tolerance, ignore);
          continue;
        }
        for (const tree of trees) {
          tree.box(q, i * d, tolerance, box);
          candidates += box.length;
          for (let k = 0; k < box.length; k++) check(box.data[k], tolerance, ignore);
        }
      }
      if (n + 1 === PROBE && candidates > (PROBE * ids.length) / 2) scan = true;
      if (!found) continue;
      copies++;
      matches[i] = (found as number[]).length > MAX_MATCHES ? null : found;
    }
    return { matches, copies };
  }
}

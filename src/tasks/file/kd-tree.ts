/**
 * A k-d tree over some features of a table of points (row-major `Float64Array`), for the two
 * searches near-copy detection needs: every point within a distance of a query in each of the
 * tree's features (a box query), and the nearest point under a caller's distance that is at
 * least the largest difference in the tree's features (`nearest`).
 *
 * Splits fall between distinct values — a node's left points all lie below its right points in
 * the split feature — so columns of few values (one-hot, small integers) prune as well as
 * continuous ones. The pivot is the median of a sample of the node's values; the cut goes on the
 * side of the pivot's run of equal values that halves the node best.
 */

/** Points a leaf holds. */
const LEAF = 8;
/** Numbers per node. */
const NODE = 7;

/** A growable array of 32-bit integers (the box query's result). */
export class IntList {
  data = new Int32Array(64);
  length = 0;

  /** Room for at least `n` values (the first `length` kept). */
  reserve(n: number): void {
    if (n <= this.data.length) return;
    const next = new Int32Array(Math.max(n, this.data.length * 2));
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }
}

/** Evenly spaced indices: `k` of `0..n-1` (all when n ≤ k). */
export function spaced(n: number, k: number): number[] {
  const m = Math.min(n, k);
  return Array.from({ length: m }, (_, s) => Math.floor(((s + 0.5) * n) / m));
}

/** A k-d tree over the features `dims` of `count` points of `d` coordinates each. */
export class KdTree {
  private readonly order: Int32Array;
  /** Node i at i × NODE: split feature (-1: a leaf), first and end point, left and right child, the left's largest and the right's smallest value. */
  private node: Float64Array = new Float64Array(0);
  private nodes = 0;
  private readonly stack = new Int32Array(4096);

  constructor(
    private readonly z: Float64Array,
    private readonly d: number,
    count: number,
    readonly dims: number[],
  ) {
    this.order = new Int32Array(count);
    for (let i = 0; i < count; i++) this.order[i] = i;
    this.grow(Math.max(16, Math.ceil((4 * count) / LEAF)));
    this.build(0, count, 0);
  }

  private grow(capacity: number): void {
    const next = new Float64Array(capacity * NODE);
    next.set(this.node);
    this.node = next;
  }

  /** The feature of widest range over a sample of the points [lo, hi) (over all of them when the sample shows none), or -1. */
  private widest(lo: number, hi: number): number {
    const { z, d, order } = this;
    const scan = (step: number): number => {
      let best = -1;
      let range = 0;
      for (const j of this.dims) {
        let min = Infinity;
        let max = -Infinity;
        for (let i = lo; i < hi; i += step) {
          const v = z[order[Math.floor(i)] * d + j];
          if (v < min) min = v;
          if (v > max) max = v;
        }
        if (max - min > range) {
          best = j;
          range = max - min;
        }
      }
      return best;
    };
    const step = Math.max(1, (hi - lo) / 32);
    const sampled = scan(step);
    return sampled >= 0 || step === 1 ? sampled : scan(1);
  }

  private build(lo: number, hi: number, depth: number): number {
    if (this.nodes * NODE === this.node.length) this.grow(this.nodes * 2);
    const id = this.nodes++;
    const at = id * NODE;
    this.node[at] = -1;
    this.node[at + 1] = lo;
    this.node[at + 2] = hi;
    if (hi - lo <= LEAF || depth >= this.stack.length / 2 - 1) return id;
    const j = this.widest(lo, hi);
    if (j < 0) return id; // the points are equal in these features
    const { z, d, order } = this;
    const sample = spaced(hi - lo, 33)
      .map((k) => z[order[lo + k] * d + j])
      .sort((a, b) => a - b);
    const pivot = sample[sample.length >> 1];
    // Three ways: [lo, a) below the pivot, [a, c) equal, [c, hi) above.
    let a = lo;
    let b = lo;
    let c = hi;
    let belowMax = -Infinity;
    let aboveMin = Infinity;
    while (b < c) {
      const v = z[order[b] * d + j];
      if (v < pivot) {
        if (v > belowMax) belowMax = v;
        const t = order[a];
        order[a++] = order[b];
        order[b++] = t;
      } else if (v > pivot) {
        if (v < aboveMin) aboveMin = v;
        const t = order[--c];
        order[c] = order[b];
        order[b] = t;
      } else b++;
    }
    // Cut below the equal run (at a) or above it (at c), whichever halves the node better.
    const centre = (lo + hi) / 2;
    const cutBelow = a > lo && (c >= hi || Math.abs(a - centre) <= Math.abs(c - centre));
    if (!cutBelow && !(c > lo && c < hi)) return id;
    const mid = cutBelow ? a : c;
    const lmax = cutBelow ? belowMax : pivot;
    const rmin = cutBelow ? (c > a ? pivot : aboveMin) : aboveMin;
    const l = this.build(lo, mid, depth + 1);
    const r = this.build(mid, hi, depth + 1);
    const node = this.node;
    node[at] = j;
    node[at + 3] = l;
    node[at + 4] = r;
    node[at + 5] = lmax;
    node[at + 6] = rmin;
    return id;
  }

  /** The tree's points leaf by leaf, left to right: points close in the tree's features are close in this order. */
  get points(): Int32Array {
    return this.order;
  }

  /** The leaf a point falls in (between a node's sides, the nearer one); leaves are numbered left to right. */
  leafOf(q: Float64Array, qi: number): number {
    const node = this.node;
    let at = 0;
    for (;;) {
      const j = node[at];
      if (j < 0) return at / NODE;
      at = (q[qi + j] <= (node[at + 5] + node[at + 6]) / 2 ? node[at + 3] : node[at + 4]) * NODE;
    }
  }

  /**
   * Puts into `out` (emptied first) every point of the leaves that the box of half-width `t`
   * around q (the point at `qi` of `q`) meets in the tree's features: a superset of the points
   * within `t` of q in each of them.
   */
  box(q: Float64Array, qi: number, t: number, out: IntList): void {
    const { stack, node, order } = this;
    let top = 0;
    let n = 0;
    let data = out.data;
    stack[top++] = 0;
    while (top > 0) {
      const at = stack[--top] * NODE;
      const j = node[at];
      if (j < 0) {
        const end = node[at + 2];
        if (n + end - node[at + 1] > data.length) {
          out.length = n;
          out.reserve(n + end - node[at + 1]);
          data = out.data;
        }
        for (let i = node[at + 1]; i < end; i++) data[n++] = order[i];
        continue;
      }
      const v = q[qi + j];
      if (v - t <= node[at + 5]) stack[top++] = node[at + 3];
      if (v + t >= node[at + 6]) stack[top++] = node[at + 4];
    }
    out.length = n;
  }

  /**
   * The smallest `distance(u, best)` over the points u ≠ `self` that this tree does not skip,
   * below `best` (else `best`). A subtree is skipped when q's difference from it in the split
   * feature is at least `best`: exact for a distance at least q's largest difference in the
   * tree's features (L∞ over them); the trimmed distances of near-copy detection are exact over
   * the union of their trees instead.
   */
  nearest(q: Float64Array, qi: number, self: number, best: number, distance: (u: number, best: number) => number): number {
    const node = this.node;
    const visit = (id: number): void => {
      const at = id * NODE;
      const j = node[at];
      if (j < 0) {
        for (let i = node[at + 1]; i < node[at + 2]; i++) {
          const u = this.order[i];
          if (u !== self) best = Math.min(best, distance(u, best));
        }
        return;
      }
      const v = q[qi + j];
      const toLeft = Math.max(0, v - node[at + 5]);
      const toRight = Math.max(0, node[at + 6] - v);
      const [first, firstGap, second, secondGap] =
        toLeft <= toRight ? [node[at + 3], toLeft, node[at + 4], toRight] : [node[at + 4], toRight, node[at + 3], toLeft];
      if (firstGap < best) visit(first);
      if (secondGap < best) visit(second);
    };
    visit(0);
    return best;
  }
}

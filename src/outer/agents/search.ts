/**
 * Model-based search over the design space, per task (a Tree-structured Parzen Estimator
 * for categorical choices, Bergstra et al. 2011): after a few random proposals, the task's
 * earlier proposals are split into the best quarter and the rest; for each decision the
 * option frequencies in each part (with a +1 prior) give l(x) and g(x), and the proposal is
 * the candidate, among 24 drawn from l, with the highest Π l(x)/g(x). It starts from
 * nothing on every task: no learning carries over between tasks.
 */
import type { TaskBrief } from '../../spec/brief.js';
import { buildHeads, decode } from './space.js';
import { type Proposal, type ProposalContext, StatelessAgent } from './types.js';

const STARTUP = 4;
const GAMMA = 0.25;
const CANDIDATES = 24;

/** The TPE-style searcher behind the `Agent` interface; its model is rebuilt from the task's history at every proposal. */
export class SearchAgent extends StatelessAgent {
  readonly name = 'search';

  /** Proposes from the task's own history (random for the first few). */
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    const heads = buildHeads(brief);
    const seen = ctx.history
      .filter(
        (h): h is { spec: unknown; reward: number; trace: { choice: number[] } } =>
          h.reward !== null && Array.isArray((h.trace as { choice?: unknown } | null)?.choice),
      )
      .map((h) => ({ choice: h.trace.choice, reward: h.reward }));
    let choice: number[];
    if (seen.length < STARTUP) {
      choice = heads.map((h) => ctx.rng.int(h.options.length));
    } else {
      const sorted = [...seen].sort((a, b) => b.reward - a.reward);
      const nGood = Math.max(1, Math.ceil(sorted.length * GAMMA));
      const good = sorted.slice(0, nGood);
      const bad = sorted.slice(nGood);
      const density = (set: { choice: number[] }[], h: number, k: number): number[] => {
        const counts = new Array<number>(k).fill(1);
        for (const s of set) counts[s.choice[h]] += 1;
        const total = counts.reduce((a, b) => a + b, 0);
        return counts.map((c) => c / total);
      };
      const l = heads.map((hd, h) => density(good, h, hd.options.length));
      const g = heads.map((hd, h) => density(bad, h, hd.options.length));
      let best: number[] = [];
      let bestScore = -Infinity;
      for (let c = 0; c < CANDIDATES; c++) {
        const cand = l.map((p) => ctx.rng.categorical(p));
        const score = cand.reduce((a, x, h) => a + Math.log(l[h][x]) - Math.log(g[h][x]), 0);
        if (score > bestScore) {
          bestScore = score;
          best = cand;
        }
      }
      choice = best;
    }
    return { spec: decode(brief, heads, choice, ctx.rng.int(1_000_000)), trace: { choice } };
  }
}

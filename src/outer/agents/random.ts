import type { TaskBrief } from '../../spec/brief.js';
import { buildHeads, decode } from './space.js';
import { type Proposal, type ProposalContext, StatelessAgent } from './types.js';

/** Uniform random search over the same design space the controller uses; never learns. */
export class RandomAgent extends StatelessAgent {
  readonly name = 'random';

  /** Draws one option per head uniformly. */
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    const heads = buildHeads(brief);
    const choice = heads.map((h) => ctx.rng.int(h.options.length));
    return { spec: decode(brief, heads, choice, ctx.rng.int(1_000_000)), trace: { choice } };
  }
}

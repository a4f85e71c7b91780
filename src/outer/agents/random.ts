import type { TaskBrief } from '../../spec/brief.js';
import { buildHeads, decode } from './space.js';
import type { Agent, Proposal, ProposalContext, UpdateStats } from './types.js';

/** Uniform random search over the same design space the controller uses; never learns. */
export class RandomAgent implements Agent {
  readonly name = 'random';

  /** Draws one option per head uniformly. */
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    const heads = buildHeads(brief);
    const choice = heads.map((h) => ctx.rng.int(h.options.length));
    return { spec: decode(brief, heads, choice, ctx.rng.int(1_000_000)), trace: { choice } };
  }

  /** Random search does not learn. */
  async update(): Promise<UpdateStats> {
    return {};
  }

  /** No state to save. */
  async state(): Promise<unknown> {
    return {};
  }

  /** Nothing to restore. */
  async load(): Promise<void> {}
}

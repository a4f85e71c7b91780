import type { TaskBrief } from '../../spec/brief.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { type Proposal, type ProposalContext, StatelessAgent } from './types.js';

/** Proposes the task's baseline spec every time, with a fresh seed: the practitioner's default. */
export class BaselineAgent extends StatelessAgent {
  readonly name = 'baseline';

  /** The baseline spec of the brief's task, reseeded. */
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    const spec = structuredClone(getPublicTask(brief.id).baseline);
    return { spec: { ...spec, seed: ctx.rng.int(1_000_000) }, trace: null };
  }
}

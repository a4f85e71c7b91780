import type { ReinforceConfig } from '../../spec/schema.js';
import type { AlgoResult, TrainContext } from '../context.js';

/** Placeholder until the reinforce trainer lands. */
export async function trainReinforce(_ctx: TrainContext, _cfg: ReinforceConfig): Promise<AlgoResult> {
  throw new Error('reinforce is not implemented yet');
}

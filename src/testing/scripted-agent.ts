/** An agent for tests of the outer loop: it proposes from a fixed script and records what it was paid. */
import type { Agent, Proposal, RewardGroup } from '../outer/agents/types.js';

/** Proposal i is `script[i mod length](i)`, with trace `{ slot: i }`; every update's groups are kept in `updates`. */
export class ScriptedAgent implements Agent {
  readonly name = 'scripted';
  readonly updates: RewardGroup[][] = [];
  private n = 0;
  constructor(private readonly script: ((i: number) => unknown)[]) {}
  async propose(): Promise<Proposal> {
    const i = this.n++;
    return { spec: this.script[i % this.script.length](i), trace: { slot: i } };
  }
  async update(groups: RewardGroup[]): Promise<Record<string, never>> {
    this.updates.push(groups);
    return {};
  }
  async state(): Promise<{ n: number }> {
    return { n: this.n };
  }
  async load(s: unknown): Promise<void> {
    this.n = (s as { n: number }).n;
  }
}

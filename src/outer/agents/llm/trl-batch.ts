/**
 * The batch the policy-update command trains on: one iteration's scored LLM completions as TRL
 * rows, which the agent writes as JSON Lines where the command finds them (`RRL_BATCH`).
 */
import { sampleFromTrace, trlRow } from '../../grpo-export.js';
import { groupAdvantages } from '../../reward.js';
import type { IterationContext, RewardGroup } from '../types.js';
import type { LlmTrace } from './trace.js';

/**
 * The TRL batch of one iteration: a row per scored completion (prompt, completion, reward,
 * advantage, group and job), the same rows `rrl export grpo --format trl` writes from the store.
 * The advantage is the loop's where it computed one, else the group's (`groupAdvantages`).
 */
export function trlBatchRows(groups: RewardGroup[], ctx: IterationContext): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const g of groups) {
    const advantages = groupAdvantages(g.items.map((i) => i.reward));
    g.items.forEach((item, slot) => {
      const t = item.trace as LlmTrace | null;
      if (t?.kind !== 'llm' || t.completion === null) return;
      const advantage = item.advantage ?? advantages[slot];
      const job = { jobId: item.jobId ?? -1, runId: ctx.runId, iteration: ctx.iteration, slot, task: g.brief.id, groupId: `it${ctx.iteration}/${g.brief.id}` };
      rows.push(trlRow(sampleFromTrace(t, { ...job, reward: item.reward, advantage, status: item.status ?? 'unknown', error: item.error ?? null })));
    });
  }
  return rows;
}

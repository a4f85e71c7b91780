import type { TaskBrief } from '../../spec/brief.js';
import type { Rng } from '../../util/rng.js';

/** What an agent may know when proposing: its own past jobs on this task, never the evaluation. */
export interface ProposalContext {
  rng: Rng;
  iteration: number;
  /** Earlier jobs of this run on the same task with the rewards the agent received. */
  history: { spec: unknown; reward: number | null; trace: unknown; status?: string; error?: string | null }[];
  /** Ask for the agent's single best guess (the mode of a stochastic policy) instead of a sample. */
  greedy?: boolean;
}

/** One proposed job: the raw spec (validated later) and the agent's own trace. */
export interface Proposal {
  spec: unknown;
  /** JSON-serialisable record of how the spec was produced (choices, log-probabilities). */
  trace: unknown;
  /**
   * Set when the agent itself already knows the proposal is unusable (an LLM reply that failed
   * validation after its repair turn, a request that failed after every retry): the job is
   * recorded as invalid with this kind and error, and paid the penalty.
   */
  rejected?: { kind: string; error: string };
  /** The JSON merge patch over the task's baseline spec the spec was written as (outer/answer.ts); absent or null for a full spec. */
  patch?: Record<string, unknown> | null;
}

/** Where an update happens: the run and the iteration whose scored proposals it receives. */
export interface IterationContext {
  runDir: string;
  runId: string;
  iteration: number;
  /** Whether this was the run's last iteration. */
  last: boolean;
}

/** One scored proposal: the agent's trace (for an LLM, the prompt and the completion) and what it earned. */
export interface ScoredItem {
  trace: unknown;
  reward: number;
  /** The group-normalised advantage the loop computed (absent: the agent computes its own). */
  advantage?: number;
  /** The job in the store, its final status and failure reason. */
  jobId?: number;
  status?: string;
  error?: string | null;
}

/** A group of proposals for one task with their outer rewards. */
export interface RewardGroup {
  brief: TaskBrief;
  items: ScoredItem[];
}

/** Statistics of an agent update, for the store and the curve. */
export type UpdateStats = Record<string, number>;

/** The trainer agent: proposes jobs, learns from their rewards, saves and restores itself. */
export interface Agent {
  readonly name: string;
  propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal>;
  /**
   * Learns from one iteration's scored proposals, grouped by task. Called once per iteration
   * before its rewards and the agent's checkpoint are stored; a run killed during the update
   * calls it again on resume, so an update must be safe to repeat.
   */
  update(groups: RewardGroup[], ctx?: IterationContext): Promise<UpdateStats>;
  /** A JSON-serialisable checkpoint. */
  state(): Promise<unknown>;
  /** Restores a checkpoint made by `state()`. */
  load(state: unknown): Promise<void>;
}

/** Base of the agents that never learn (random search, the baseline spec, the per-task search): no update, no state. */
export abstract class StatelessAgent implements Agent {
  abstract readonly name: string;
  abstract propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal>;

  /** Nothing to learn from the rewards. */
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

/** One chat message as the chat.completions protocol carries it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

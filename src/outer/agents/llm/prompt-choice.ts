/**
 * Which prompt a proposal gets (see `LlmOptions.promptForm`): the full one (brief, catalog, every
 * field, history) or the compact one (one valid spec to edit), measured in the model's tokens
 * against its context when the context is known.
 */
import type { TaskBrief } from '../../../spec/brief.js';
import { validateSpec } from '../../../inner/spec-check.js';
import { buildPrompt, type PromptHistoryItem } from '../prompt.js';
import type { ChatMessage } from '../types.js';
import type { ContextProbe } from './context-probe.js';
import type { ResolvedLlmOptions } from './options.js';
import { publicBaseline } from './reply.js';
import type { LlmTrace } from './trace.js';

/** The prompt chosen for one proposal, why that form, and an error when it does not fit the context. */
export interface ChosenPrompt {
  messages: ChatMessage[];
  info: NonNullable<LlmTrace['prompt']>;
  error?: string;
}

/** Chooses each proposal's prompt; remembers the tasks whose full prompt does not fit. */
export class PromptChooser {
  /** Tasks whose full prompt does not fit (auto form), with why. */
  private readonly compactTasks = new Map<string, string>();

  /** A chooser under the agent's settings, measuring with `probe`. */
  constructor(
    private readonly o: Pick<ResolvedLlmOptions, 'promptForm' | 'historyLimit' | 'maxTokens'>,
    private readonly probe: ContextProbe,
    private readonly log: (message: string) => void,
  ) {}

  /** From now on `task` gets the compact prompt (auto form), for the reason `why`. */
  useCompact(task: string, why: string): void {
    this.compactTasks.set(task, why);
    this.log(`${task}: ${why}; using the compact prompt`);
  }

  /**
   * The compact prompt's example: the best-rewarded earlier spec on the task that is still valid
   * (so the compact form keeps learning in context), else the task's public baseline spec.
   */
  private exampleToEdit(brief: TaskBrief, history: PromptHistoryItem[]): unknown {
    const best = history
      .filter((h) => h.reward !== null && h.spec !== null && typeof h.spec === 'object' && validateSpec(h.spec, brief).ok)
      .sort((a, b) => (b.reward as number) - (a.reward as number))[0];
    if (best) return best.spec;
    return publicBaseline(brief.id);
  }

  /**
   * The prompt for one proposal and why that form: see `LlmOptions.promptForm`. With the context
   * known, the chosen prompt is measured in the model's tokens; one that leaves less than
   * `maxTokens` for the reply is an error naming the sizes.
   */
  async choose(brief: TaskBrief, history: PromptHistoryItem[]): Promise<ChosenPrompt> {
    const full = (): ChatMessage[] => buildPrompt(brief, { history, historyLimit: this.o.historyLimit });
    const example = this.exampleToEdit(brief, history);
    const compact = (): ChatMessage[] => buildPrompt(brief, { compact: true, example });
    const maxTokens = this.o.maxTokens;
    const context = await this.probe.contextSize();
    const fit = async (form: 'full' | 'compact', messages: ChatMessage[], why: string): Promise<ChosenPrompt> => {
      const m = context !== null ? await this.probe.countTokens(messages) : null;
      const info = { form, tokens: m?.tokens ?? null, contextTokens: context, measuredBy: m?.by ?? null, why };
      if (m && context !== null && m.tokens + maxTokens > context) {
        const error =
          `the ${form} prompt is ${m.tokens} tokens; with --max-tokens ${maxTokens} it exceeds the model's context of ${context} tokens: ` +
          'lower --max-tokens or serve the model with a larger context';
        return { messages, info, error };
      }
      return { messages, info };
    };
    if (this.o.promptForm === 'full' || (this.o.promptForm === 'auto' && example === null)) {
      return fit('full', full(), this.o.promptForm === 'full' ? '--llm-prompt full' : 'no example spec for the compact form');
    }
    if (this.o.promptForm === 'compact') return fit('compact', compact(), '--llm-prompt compact');
    const known = this.compactTasks.get(brief.id);
    if (known) return fit('compact', compact(), known);
    const asFull = (messages: ChatMessage[], tokens: number | null, measuredBy: string | null, why: string): ChosenPrompt => ({
      messages,
      info: { form: 'full', tokens, contextTokens: context, measuredBy, why },
    });
    const untilRefused = 'the full prompt until the server refuses it as too long';
    if (context === null) return asFull(full(), null, null, `the model's context is unknown (no --llm-context, and the server does not say): ${untilRefused}`);
    const messages = full();
    const m = await this.probe.countTokens(messages);
    if (m === null) return asFull(messages, null, null, `the server offers no tokenizer endpoint: ${untilRefused}`);
    if (m.tokens + maxTokens <= context) {
      return asFull(messages, m.tokens, m.by, `${m.tokens} prompt tokens + ${maxTokens} for the reply fit the context of ${context}`);
    }
    const why = `the full prompt is ${m.tokens} tokens (${m.by}); with ${maxTokens} for the reply it exceeds the context of ${context}`;
    this.useCompact(brief.id, why);
    return fit('compact', compact(), why);
  }
}

/**
 * A large language model as the trainer agent, behind any OpenAI-compatible endpoint (vLLM,
 * SGLang, llama.cpp's server, Ollama) through the official `openai` client. Each proposal is
 * one chat completion asked for structured output with the job spec's JSON Schema and checked
 * with the zod schema and the brief anyway; an invalid reply gets one repair turn with the
 * exact error. Timeouts, connection errors, 429 and 5xx answers are retried here (the client's
 * own retries are off, so every attempt is recorded) with exponential backoff, jitter and
 * `Retry-After`; after the limit the proposal is recorded as rejected and the run goes on.
 *
 * The LLM learns outside this process: between iterations `policyUpdateCommand` (a TRL or
 * verl script on a GPU node) trains a LoRA adapter on the iteration's exported batch, and the
 * agent loads it into the server under a new, never-reused name (vLLM's
 * `POST /v1/load_lora_adapter`) and samples the next iteration from it.
 *
 * This file holds the agent itself; its parts, one concern a file in this folder: options.ts
 * (settings, defaults), prompt-choice.ts (full or compact prompt) with context-probe.ts (the
 * model's context and tokenizer), completions.ts (requests) with response-format.ts and
 * retry.ts, reply.ts (reading a reply, the repair turn), trace.ts (what is recorded),
 * policy-update.ts (the adapter and its updates) with trl-batch.ts (the batch it trains on).
 */
import OpenAI from 'openai';
import { createHash } from 'node:crypto';
import type { TaskBrief } from '../../../spec/brief.js';
import { oneLine } from '../../../spec/bounds.js';
import type { PromptHistoryItem } from '../prompt.js';
import type { ChatMessage } from '../types.js';
import type { Agent, IterationContext, Proposal, ProposalContext, RewardGroup, UpdateStats } from '../types.js';
import { Completions, type Sample } from './completions.js';
import { ContextProbe, contextOverflow } from './context-probe.js';
import { type LlmOptions, type ResolvedLlmOptions, resolveLlmOptions } from './options.js';
import { PolicyUpdater } from './policy-update.js';
import { PromptChooser } from './prompt-choice.js';
import { checkReply, clipCompletion, repairMessage } from './reply.js';
import type { ResponseFormatMode } from './response-format.js';
import type { AttemptRecord, LlmTrace, TurnRecord } from './trace.js';

/** The LLM trainer agent behind the `Agent` interface. */
export class LlmAgent implements Agent {
  readonly name = 'llm';
  private readonly o: ResolvedLlmOptions;
  private readonly completions: Completions;
  private readonly probe: ContextProbe;
  private readonly prompts: PromptChooser;
  private readonly policy: PolicyUpdater;

  /** Creates the client; the API key is read from `apiKeyEnv` (servers without auth accept any). */
  constructor(options: LlmOptions, log: (message: string) => void = () => {}) {
    this.o = resolveLlmOptions(options);
    const client = new OpenAI({
      baseURL: this.o.baseUrl,
      apiKey: process.env[this.o.apiKeyEnv] || 'EMPTY',
      maxRetries: 0,
      timeout: this.o.timeoutSeconds * 1000,
    });
    this.policy = new PolicyUpdater(client, this.o, log);
    const served = (): string => this.policy.servedModel();
    this.completions = new Completions(client, this.o, served, log);
    this.probe = new ContextProbe(this.o, served);
    this.prompts = new PromptChooser(this.o, this.probe, log);
  }

  /** How requests ask for structured output now (see `RESPONSE_FORMATS`). */
  responseFormatMode(): ResponseFormatMode {
    return this.completions.formatMode();
  }

  /** The model name requests go to: the current adapter, or the base model. */
  servedModel(): string {
    return this.policy.servedModel();
  }

  /** Writes one job spec for `brief`: prompt, completion, checks, at most one repair turn. */
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    await this.policy.ensureAdapter();
    const history: PromptHistoryItem[] = ctx.history.map((h) => ({ spec: h.spec, reward: h.reward, status: h.status, error: h.error }));
    for (;;) {
      const chosen = await this.prompts.choose(brief, history);
      const messages = chosen.messages;
      const key = `${ctx.iteration}:${brief.id}:${createHash('sha256').update(JSON.stringify(messages)).digest('hex')}`;
      const trace: LlmTrace = {
        kind: 'llm',
        model: this.o.model,
        adapter: this.policy.currentAdapter(),
        messages,
        completion: null,
        logprobs: null,
        turns: [],
        repaired: false,
        error: null,
        sampling: { temperature: this.o.temperature, topP: this.o.topP, maxTokens: this.o.maxTokens, n: this.o.n },
        prompt: chosen.info,
      };
      if (chosen.error) {
        trace.error = chosen.error;
        return { spec: null, trace, rejected: { kind: 'llm-error', error: chosen.error } };
      }
      const first = await this.completions.sampleInitial(key, messages, ctx.rng, brief);
      if (!first.ok) {
        // The server says the full prompt is too long: the compact one, from now on for this task.
        const over = contextOverflow(first.error);
        if (over.overflow && chosen.info.form === 'full' && this.o.promptForm === 'auto') {
          if (over.contextTokens !== null) this.probe.learn(over.contextTokens);
          const why = `the server refused the full prompt as too long (${oneLine(first.error, 300)})`;
          this.prompts.useCompact(brief.id, why);
          continue;
        }
        trace.turns.push(failedTurn('initial', first.attempts, first.error));
        trace.error = first.error;
        return { spec: null, trace, rejected: { kind: 'llm-error', error: first.error } };
      }
      let sample = first.sample;
      let check = checkReply(sample.content, brief);
      trace.turns.push(turnRecord('initial', sample, check.ok ? null : check.error));
      trace.completion = clipCompletion(sample.content);
      trace.logprobs = sample.logprobs;
      if (!check.ok) {
        const repairMessages: ChatMessage[] = [
          ...messages,
          { role: 'assistant', content: clipCompletion(sample.content) ?? '' },
          { role: 'user', content: repairMessage(check.error, brief) },
        ];
        const second = await this.completions.request(repairMessages, 1, ctx.rng, brief);
        trace.repaired = true;
        if (!second.ok) {
          trace.turns.push(failedTurn('repair', second.attempts, second.error));
          trace.error = `${check.error} (the repair turn failed: ${second.error})`;
          return { spec: check.spec, patch: check.patch, trace, rejected: { kind: 'invalid', error: trace.error } };
        }
        sample = second.samples[0];
        check = checkReply(sample.content, brief);
        trace.turns.push(turnRecord('repair', sample, check.ok ? null : check.error));
        trace.messages = repairMessages;
        trace.completion = clipCompletion(sample.content);
        trace.logprobs = sample.logprobs;
        if (!check.ok) {
          trace.error = check.error;
          return { spec: check.spec, patch: check.patch, trace, rejected: { kind: 'invalid', error: `after a repair turn: ${check.error}` } };
        }
      }
      return { spec: check.spec, patch: check.patch, trace };
    }
  }

  /**
   * Learns from one iteration's scored completions through the policy-update command (see
   * policy-update.ts); without a command (in-context learning only) nothing changes.
   */
  async update(groups: RewardGroup[], ctx?: IterationContext): Promise<UpdateStats> {
    return this.policy.update(groups, ctx);
  }

  /** The adapter sampled from, the version counter and the policy updates so far. */
  async state(): Promise<unknown> {
    return this.policy.state();
  }

  /** Restores `state()`; the adapter is assumed still loaded in the server. */
  async load(state: unknown): Promise<void> {
    return this.policy.load(state);
  }
}

/** The trace's record of one answered turn. */
function turnRecord(turn: 'initial' | 'repair', s: Sample, error: string | null): TurnRecord {
  return {
    turn,
    requestId: s.requestId,
    choiceIndex: s.choiceIndex,
    attempts: s.attempts,
    completion: clipCompletion(s.content),
    logprobs: s.logprobs,
    finishReason: s.finishReason,
    error,
    responseFormat: s.responseFormat,
    usage: s.usage,
    wallMs: s.wallMs,
  };
}

/** The trace's record of a turn whose request failed: its attempts and why, no completion. */
function failedTurn(turn: 'initial' | 'repair', attempts: AttemptRecord[], error: string): TurnRecord {
  return { turn, requestId: null, choiceIndex: 0, attempts, completion: null, logprobs: null, finishReason: null, error };
}

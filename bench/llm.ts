/**
 * The LLM agent against a real model server: llama.cpp (llama-cpp-python's server) serving
 * SmolLM2-135M-Instruct on this machine's CPU, started here on 127.0.0.1 and stopped at the end.
 * Two arms, the same agent code: structured output on (the server constrains the reply with a
 * grammar from the task's grammar-form schema) and off (free text, validated and repaired alike).
 * Per arm and task, N proposals: the share of valid specs (at the first reply, and after the repair
 * turn), the share of proposals that needed a repair turn, generation tokens/s (completion tokens
 * over the requests' wall time), wall seconds per proposal, the prompt form and its size in tokens.
 *
 * Needs llama-cpp-python[server] in .venv (python/setup-venv.sh) and the model (python/fetch-model.sh).
 * Not in the default set: `npm run bench -- llm`. Settings from the environment: RRL_BENCH_LLM_N
 * (proposals per task and arm, 4), RRL_BENCH_LLM_TASKS (iris-species,cartpole-short),
 * RRL_BENCH_LLM_MAX_TOKENS (384), RRL_BENCH_LLM_CTX (the server's context, 2048),
 * RRL_BENCH_LLM_THREADS (1), RRL_BENCH_LLM_TEMPERATURE (0.7).
 */
import { LlmAgent } from '../src/outer/agents/llm/agent.js';
import type { LlmTrace } from '../src/outer/agents/llm/trace.js';
import { getPublicTask } from '../src/tasks/briefs.js';
import { LlamaServer, llamaServerMissing } from '../src/testing/llama-server.js';
import { Rng } from '../src/util/rng.js';
import { num, table } from '../src/cli/format.js';

const log = (s: string): boolean => process.stderr.write(`${s}\n`);
const env = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

/** One proposal's outcome. */
interface Outcome {
  valid: boolean;
  validFirst: boolean;
  repaired: boolean;
  completionTokens: number;
  requestSeconds: number;
  wallSeconds: number;
  promptForm: string;
  promptTokens: number | null;
  responseFormat: string | null;
  error: string | null;
}

/** The figures of a set of outcomes. */
function summarise(rows: Outcome[]) {
  const n = rows.length || 1;
  const tokens = rows.reduce((a, r) => a + r.completionTokens, 0);
  const seconds = rows.reduce((a, r) => a + r.requestSeconds, 0);
  return {
    proposals: rows.length,
    validShare: rows.filter((r) => r.valid).length / n,
    validFirstShare: rows.filter((r) => r.validFirst).length / n,
    repairedShare: rows.filter((r) => r.repaired).length / n,
    repairedValidShare: rows.filter((r) => r.repaired && r.valid).length / Math.max(1, rows.filter((r) => r.repaired).length),
    tokensPerSecond: seconds > 0 ? tokens / seconds : null,
    completionTokensPerProposal: tokens / n,
    wallSecondsPerProposal: rows.reduce((a, r) => a + r.wallSeconds, 0) / n,
    promptForm: [...new Set(rows.map((r) => r.promptForm))].join(','),
    promptTokens: rows.find((r) => r.promptTokens !== null)?.promptTokens ?? null,
    responseFormat: [...new Set(rows.map((r) => r.responseFormat ?? '—'))].join(','),
    errors: rows
      .filter((r) => r.error)
      .map((r) => r.error!.slice(0, 160))
      .slice(0, 4),
  };
}

/** Runs the benchmark (see the module comment). */
export async function llm(): Promise<Record<string, unknown>> {
  const missing = llamaServerMissing();
  if (missing) throw new Error(`bench llm: ${missing}`);
  const n = env('RRL_BENCH_LLM_N', 4);
  const tasks = (process.env.RRL_BENCH_LLM_TASKS ?? 'iris-species,cartpole-short')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const maxTokens = env('RRL_BENCH_LLM_MAX_TOKENS', 384);
  const nCtx = env('RRL_BENCH_LLM_CTX', 2048);
  const threads = env('RRL_BENCH_LLM_THREADS', 1);
  const temperature = Number(process.env.RRL_BENCH_LLM_TEMPERATURE ?? 0.7);
  const server = new LlamaServer({ nCtx, threads });
  const t0 = performance.now();
  await server.start();
  const startSeconds = (performance.now() - t0) / 1000;
  log(`llm: ${server.commandLine.join(' ')} (ready in ${num(startSeconds, 1)} s)`);
  const arms: Record<string, Record<string, ReturnType<typeof summarise>>> = {};
  const all: Record<string, Outcome[]> = {};
  try {
    for (const arm of ['structured', 'free'] as const) {
      const agent = new LlmAgent(
        { baseUrl: server.baseUrl, model: server.alias, structuredOutput: arm === 'structured', maxTokens, temperature, retries: 1, timeoutSeconds: 600 },
        (m) => log(`llm [${arm}]: ${m}`),
      );
      arms[arm] = {};
      all[arm] = [];
      for (const task of tasks) {
        const brief = getPublicTask(task).brief;
        const rows: Outcome[] = [];
        for (let i = 0; i < n; i++) {
          const s0 = performance.now();
          const p = await agent.propose(brief, { rng: new Rng(1000 + i), iteration: 0, history: [] });
          const t = p.trace as LlmTrace;
          const row: Outcome = {
            valid: !p.rejected,
            validFirst: !p.rejected && !t.repaired,
            repaired: t.repaired,
            completionTokens: t.turns.reduce((a, x) => a + (x.usage?.completionTokens ?? 0), 0),
            requestSeconds: t.turns.reduce((a, x) => a + (x.wallMs ?? 0), 0) / 1000,
            wallSeconds: (performance.now() - s0) / 1000,
            promptForm: t.prompt?.form ?? '?',
            promptTokens: t.prompt?.tokens ?? t.turns[0]?.usage?.promptTokens ?? null,
            responseFormat: t.turns[0]?.responseFormat ?? null,
            error: p.rejected?.error ?? null,
          };
          log(
            `llm [${arm}] ${task} ${i + 1}/${n}: ${row.valid ? (row.repaired ? 'valid after repair' : 'valid') : `invalid (${(row.error ?? '').slice(0, 120)})`}, ${row.completionTokens} tokens, ${num(row.wallSeconds, 1)} s`,
          );
          rows.push(row);
        }
        arms[arm][task] = summarise(rows);
        all[arm].push(...rows);
      }
      arms[arm].all = summarise(all[arm]);
    }
  } finally {
    await server.close();
  }
  const pct = (x: number | null): string => (x === null ? '—' : `${num(100 * x, 0)} %`);
  const rows: string[][] = [];
  for (const [arm, byTask] of Object.entries(arms)) {
    for (const [task, s] of Object.entries(byTask)) {
      rows.push([
        arm,
        task,
        String(s.proposals),
        pct(s.validShare),
        pct(s.validFirstShare),
        pct(s.repairedShare),
        num(s.tokensPerSecond, 1),
        num(s.completionTokensPerProposal, 0),
        num(s.wallSecondsPerProposal, 1),
        `${s.promptForm} (${s.promptTokens ?? '?'} tokens)`,
        s.responseFormat,
      ]);
    }
  }
  console.log(
    table(
      ['arm', 'task', 'proposals', 'valid', 'valid at 1st reply', 'repaired', 'tokens/s', 'tokens/proposal', 's/proposal', 'prompt', 'response_format'],
      rows,
    ),
  );
  return {
    model: 'SmolLM2-135M-Instruct Q4_1 (llama-cpp-python 0.3.36 server)',
    server: server.commandLine.join(' '),
    serverReadySeconds: startSeconds,
    n,
    tasks,
    maxTokens,
    nCtx,
    threads,
    temperature,
    arms,
  };
}

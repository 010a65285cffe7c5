import type { AgentTask, LlmProvider, PromptMessage, TokenUsage, ToolCallRequest, ToolRound } from "../../providers/llm/types.js";
import { ProviderError } from "../../providers/llm/types.js";
import { UpstreamError } from "../shared/errors.js";
import type { CallAction } from "../tools/ports.js";
import type { ToolCallOrigin, ToolCallRecord, ToolRunner } from "../tools/tool-runner.js";

/** Rounds of tool calls one turn may make; the request after the last one asks for an answer without tools. */
export const MAX_TOOL_ROUNDS = 5;

export interface ToolUse {
  runner: ToolRunner;
  origin: ToolCallOrigin;
  /** Told of each call as it finishes (the `tool.called` event). */
  onToolCall?: (record: ToolCallRecord) => Promise<void>;
  /** Settles before any tool runs: a turn whose user's message is still committing runs no tool before it is durable. */
  ready?: Promise<void>;
  /** Told, as a round's calls start, of each tool's words to say while it runs (`speak_during_execution`, in calls). */
  onToolSpeech?: (text: string) => void;
}

export interface AgentReply {
  /** Everything the model said in the turn, in order: what it said before calling tools included. */
  text: string;
  toolCalls: ToolCallRecord[];
  /** What the call layer must do after the reply has been spoken, in the order the model asked. */
  actions: CallAction[];
  /** The tokens of every model request of the turn, when the vendor reports them. */
  usage: TokenUsage | undefined;
}

/**
 * Adds text to the reply and hands it to the tokens' receiver. A module function, not a closure in the turn, where tsx
 * (which keeps names) would give it its name with a `defineProperty` call on every turn.
 */
function say(reply: AgentReply, onToken: ((token: string) => void) | undefined, text: string): void {
  reply.text += text;
  onToken?.(text);
}

/**
 * One agent turn with tools: the model answers, and while it asks for tool calls (at most `MAX_TOOL_ROUNDS` rounds,
 * the calls of a round run together), their results go back to it. Text streams as it comes, whichever round it
 * belongs to, so the concatenated tokens are the stored reply. A provider failure is an upstream error.
 *
 * `signal` (a caller who barged in on a call) stops the turn: the model's request is aborted, and a round whose tools
 * are still running is not waited for; they finish on their own and are announced through `onToolCall`, but the
 * reply returned does not list them.
 */
export async function generateReply(
  provider: LlmProvider,
  messages: PromptMessage[],
  task: AgentTask,
  onToken: ((token: string) => void) | undefined,
  tools: ToolUse | undefined,
  signal?: AbortSignal,
): Promise<AgentReply> {
  const specs = tools?.runner.specs() ?? [];
  const rounds: ToolRound[] = [];
  const reply: AgentReply = { text: "", toolCalls: [], actions: [], usage: undefined };
  for (;;) {
    const lastChance = rounds.length >= MAX_TOOL_ROUNDS;
    let roundText = "";
    let calls: ToolCallRequest[] = [];
    try {
      const outputs = provider.respond({
        messages,
        task,
        streamed: onToken !== undefined,
        ...(signal ? { signal } : {}),
        ...(specs.length > 0 ? { tools: specs, toolChoice: lastChance ? ("none" as const) : ("auto" as const), toolRounds: rounds } : {}),
      });
      for await (const output of outputs) {
        if (output.type === "text") {
          // A round's text after an earlier round's is a new sentence: keep the two apart.
          if (roundText === "" && reply.text !== "" && !/\s$/.test(reply.text) && !/^\s/.test(output.text)) say(reply, onToken, " ");
          roundText += output.text;
          say(reply, onToken, output.text);
        } else if (output.type === "tool_calls") calls = output.calls;
        else reply.usage = { inputTokens: (reply.usage?.inputTokens ?? 0) + output.usage.inputTokens, outputTokens: (reply.usage?.outputTokens ?? 0) + output.usage.outputTokens };
      }
    } catch (error) {
      if (error instanceof ProviderError) throw new UpstreamError(`Model provider failed: ${error.message}`, error.options.timedOut ?? false);
      throw error;
    }
    if (!tools || calls.length === 0 || lastChance || signal?.aborted) return reply;
    await tools.ready;
    for (const call of calls) {
      const speech = tools.runner.speechFor(call.name);
      if (speech !== "") tools.onToolSpeech?.(speech);
    }
    const running = Promise.all(
      calls.map(async (call) => {
        const result = await tools.runner.run(call, tools.origin);
        await tools.onToolCall?.(result.record);
        return result;
      }),
    );
    const done = signal ? await untilAborted(running, signal) : await running;
    if (!done) return reply;
    for (const result of done) {
      reply.toolCalls.push(result.record);
      if (result.action) reply.actions.push(result.action);
    }
    rounds.push({ text: roundText, calls, results: calls.map((call, index) => ({ id: call.id, content: done[index]?.content ?? "" })) });
  }
}

/** The work's result, or undefined as soon as `signal` aborts (the work goes on; its failure is then ignored). */
async function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

import type { LlmProvider } from "../../providers/llm/types.js";
import { VoiceAgentSession, type GeneratedTurn, type TurnRequest } from "./voice-agent-session.js";
import type { SecretBox } from "../access/secrets.js";
import { generateReply } from "../chat/agent-reply.js";
import { buildPrompt } from "../chat/prompt.js";
import { toolsOf, type ProjectConfig } from "../projects/project-config.js";
import type { ThreadLocks } from "../threads/thread-locks.js";
import type { ThreadRecord } from "../threads/threads-repository.js";
import type { ToolTransport } from "../tools/ports.js";
import { ToolRunner, type ToolCallRecord } from "../tools/tool-runner.js";
import type { CallLifecycle } from "./call-lifecycle.js";
import type { CallsRepository } from "./calls-repository.js";
import type { CarrierCall } from "./ports.js";

/** What the agent's tools need from outside the domain in a call: a way to send requests, and the thread's event log. */
export interface CallToolSupport {
  transport: ToolTransport;
  /** Appends a `tool.called` event to the thread's events. */
  announce(threadId: string, payload: Record<string, unknown>): Promise<void>;
}

export interface CallAgentDeps {
  calls: CallsRepository;
  lifecycle: CallLifecycle;
  locks: ThreadLocks;
  tools: CallToolSupport;
  secretBox: SecretBox;
}

/**
 * The prompt variables of one call: the thread's context, and the phone-call request's `appointment_opening_id` and
 * `verification_code` when it gave them (decisions.md, Tools). The code is opened here, for this call's prompt only.
 */
export function callPromptContext(call: CarrierCall, threadContext: Record<string, unknown>, secretBox: SecretBox): Record<string, unknown> {
  return {
    ...threadContext,
    ...(call.appointment_opening_id !== null ? { appointment_opening_id: call.appointment_opening_id } : {}),
    ...(call.verification_code_sealed !== null ? { verification_code: secretBox.open(call.verification_code_sealed) } : {}),
  };
}

/**
 * The agent that answers in one call: the project's model with the same prompt as a chat turn (the call's variables
 * added), the project's tools for the call's kind (`end_call` in every call, `transfer_call` in phone calls), each
 * tool request naming the call, and each tool call announced as `tool.called` and stored with the agent's utterance.
 */
export function callAgent(
  deps: CallAgentDeps,
  call: CarrierCall,
  thread: Pick<ThreadRecord, "context" | "timezone">,
  agent: ProjectConfig["agent"],
  llm: (context: Record<string, unknown>) => LlmProvider,
  toolSecret: string | undefined,
  recorded: number,
  /** Before the call's own transcript: an inbound caller's earlier conversations. */
  history: { role: "user" | "assistant"; content: string }[] = [],
): VoiceAgentSession {
  const context = callPromptContext(call, thread.context, deps.secretBox);
  const provider = llm(context);
  const runner = new ToolRunner(toolsOf(agent), toolSecret, deps.tools.transport, call.call_type);
  const offersTools = runner.specs().length > 0;
  let conversationId = call.conversation_id;
  const generate = async (request: TurnRequest): Promise<GeneratedTurn> => {
    // Known once the call connected, which is before its first turn; read once, and only when a tool may need it.
    if (offersTools && conversationId === null) conversationId = (await deps.calls.findById(call.id))?.conversation_id ?? null;
    const announce = (record: ToolCallRecord) =>
      deps.tools.announce(call.thread_id, { conversation_id: conversationId, message_id: request.userMessageId, reply_message_id: null, call_id: call.id, tool_call: record });
    const reply = await generateReply(
      provider,
      request.messages,
      "reply",
      request.onDelta,
      {
        runner,
        origin: {
          threadId: call.thread_id,
          conversationId: conversationId ?? 0,
          messageId: request.userMessageId,
          call: { id: call.id, appointment_opening_id: call.appointment_opening_id },
          context: thread.context,
        },
        onToolCall: announce,
        ...(request.onToolSpeech ? { onToolSpeech: request.onToolSpeech } : {}),
      },
      request.signal,
    );
    return { text: reply.text, toolCalls: reply.toolCalls, actions: reply.actions };
  };
  return new VoiceAgentSession({
    generate,
    preamble: () => buildPrompt({ systemPrompt: agent.system_prompt, context, timezone: thread.timezone, now: new Date(), history }),
    maxHistoryMessages: agent.max_history_messages,
    record: (utterances) => deps.lifecycle.record(call.id, utterances),
    serialize: (work) => deps.locks.withLock(call.thread_id, work),
    recorded,
  });
}

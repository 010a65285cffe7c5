import type { PromptMessage } from "../../providers/llm/types.js";
import type { CallAction } from "../tools/ports.js";
import type { TranscriptItem, VoiceAgent, VoiceTurnOptions } from "./ports.js";
import { roleOfSpeaker } from "./speakers.js";

/** An utterance as stored in the thread's history, with its message extras (an agent's turn lists its tool calls). */
export interface RecordedUtterance extends TranscriptItem {
  extras?: Record<string, unknown>;
}

/** What one of the agent's turns produced: its text, the tool calls it made (as stored), the call actions it asked for. */
export interface GeneratedTurn {
  text: string;
  toolCalls: unknown[];
  actions: CallAction[];
}

/** How a turn is asked of the project's model, tools included; the domain builds it for the call. */
export interface TurnRequest {
  messages: PromptMessage[];
  /** The stored id of the user's utterance the turn answers; null when none was recorded by this session. */
  userMessageId: string | null;
  onDelta?: (text: string) => void;
  onToolSpeech?: (text: string) => void;
  signal?: AbortSignal;
}

export interface VoiceAgentSessionOptions {
  /** One turn of the project's agent, with the call's tools. */
  generate(request: TurnRequest): Promise<GeneratedTurn>;
  /** The chat path's prompt for the call's thread without history: system prompt, call variables, local time. */
  preamble(): PromptMessage[];
  /** The agent's history budget (`agent.max_history_messages`), applied to the transcript. */
  maxHistoryMessages: number;
  /**
   * Stores utterances in the thread's history, in the call's conversation: their message ids, in order; undefined once
   * the call is no longer ongoing.
   */
  record(utterances: RecordedUtterance[]): Promise<string[] | undefined>;
  /** Runs a whole turn under the thread's lock, so that a chat on the same thread never lands inside it. */
  serialize<T>(work: () => Promise<T>): Promise<T>;
  /** How many utterances of the transcript are stored already (a vendor's socket that reconnected mid-call). */
  recorded?: number;
}

/**
 * The agent side of one call. A provider feeds it the transcript so far, as a vendor's WebSocket LLM connection
 * would; it records the utterances it had not seen, asks the project's model with the same prompt as a chat turn
 * (the transcript in place of the stored history), tools included, and streams the reply back. A real vendor's LLM
 * WebSocket is then a thin edge that parses the vendor's frames into `respond` calls.
 */
export class VoiceAgentSession implements VoiceAgent {
  private recorded: number;
  private lastUserMessageId: string | null = null;
  /** The tool calls of a reply the carrier records itself (`recordReply: false`): stored with it by `hear`. */
  private unrecordedToolCalls: unknown[] = [];

  constructor(private readonly options: VoiceAgentSessionOptions) {
    this.recorded = options.recorded ?? 0;
  }

  async respond(
    transcript: readonly TranscriptItem[],
    onDelta?: (text: string) => void,
    signal?: AbortSignal,
    options: VoiceTurnOptions = {},
  ): Promise<string | undefined> {
    return this.options.serialize(async () => {
      if (!(await this.recordNew(transcript))) return undefined;
      const history = this.options.maxHistoryMessages > 0 ? transcript.slice(-this.options.maxHistoryMessages) : [];
      const messages: PromptMessage[] = [
        ...this.options.preamble(),
        ...history.map((item): PromptMessage => ({ role: roleOfSpeaker(item.role), content: item.content })),
      ];
      let turn: GeneratedTurn;
      try {
        turn = await this.options.generate({
          messages,
          userMessageId: this.lastUserMessageId,
          ...(onDelta ? { onDelta } : {}),
          ...(options.onToolSpeech ? { onToolSpeech: options.onToolSpeech } : {}),
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        if (signal?.aborted) return undefined;
        throw error;
      }
      if (signal?.aborted) return undefined;
      for (const action of turn.actions) options.onCallAction?.(action);
      if (options.recordReply === false) {
        this.unrecordedToolCalls = turn.toolCalls;
        return turn.text;
      }
      if (!(await this.options.record([{ role: "agent", content: turn.text, ...toolCallExtras(turn.toolCalls) }]))) return undefined;
      this.recorded = transcript.length + 1;
      return turn.text;
    });
  }

  async hear(transcript: readonly TranscriptItem[]): Promise<boolean> {
    return this.options.serialize(() => this.recordNew(transcript));
  }

  private async recordNew(transcript: readonly TranscriptItem[]): Promise<boolean> {
    const unseen: RecordedUtterance[] = transcript.slice(this.recorded).map((item) => ({ role: item.role, content: item.content }));
    const reply = unseen.find((item) => item.role === "agent");
    if (reply && this.unrecordedToolCalls.length > 0) Object.assign(reply, toolCallExtras(this.unrecordedToolCalls));
    this.unrecordedToolCalls = [];
    if (unseen.length > 0) {
      const ids = await this.options.record(unseen);
      if (!ids) return false;
      unseen.forEach((item, index) => {
        if (item.role === "user") this.lastUserMessageId = ids[index] ?? null;
      });
    }
    this.recorded = transcript.length;
    return true;
  }
}

function toolCallExtras(toolCalls: unknown[]): { extras?: Record<string, unknown> } {
  return toolCalls.length > 0 ? { extras: { tool_calls: toolCalls } } : {};
}

import type { LlmProvider, PromptMessage } from "../llm/types.js";
import type { TranscriptItem, VoiceAgent } from "../../domain/calls/ports.js";
import { roleOfSpeaker } from "./speakers.js";

export interface VoiceAgentSessionOptions {
  llm: LlmProvider;
  /** The chat path's prompt for the call's thread without history: system prompt, thread context, local time. */
  preamble(): PromptMessage[];
  /** The agent's history budget (`agent.max_history_messages`), applied to the transcript. */
  maxHistoryMessages: number;
  /** Stores utterances in the thread's history, in the call's conversation; false once the call is no longer ongoing. */
  record(utterances: TranscriptItem[]): Promise<boolean>;
  /** Runs a whole turn under the thread's lock, so that a chat on the same thread never lands inside it. */
  serialize<T>(work: () => Promise<T>): Promise<T>;
  /** How many utterances of the transcript are stored already (a vendor's socket that reconnected mid-call). */
  recorded?: number;
}

/**
 * The agent side of one call. A provider feeds it the transcript so far, as a vendor's WebSocket LLM connection
 * would; it records the utterances it had not seen, asks the project's model with the same prompt as a chat turn
 * (the transcript in place of the stored history) and streams the reply back. A real vendor's LLM WebSocket is then
 * a thin edge that parses the vendor's frames into `respond` calls.
 */
export class VoiceAgentSession implements VoiceAgent {
  private recorded: number;

  constructor(private readonly options: VoiceAgentSessionOptions) {
    this.recorded = options.recorded ?? 0;
  }

  async respond(
    transcript: readonly TranscriptItem[],
    onDelta?: (text: string) => void,
    signal?: AbortSignal,
    options: { recordReply?: boolean } = {},
  ): Promise<string | undefined> {
    return this.options.serialize(async () => {
      if (!(await this.recordNew(transcript))) return undefined;
      const history = this.options.maxHistoryMessages > 0 ? transcript.slice(-this.options.maxHistoryMessages) : [];
      const messages: PromptMessage[] = [
        ...this.options.preamble(),
        ...history.map((item): PromptMessage => ({ role: roleOfSpeaker(item.role), content: item.content })),
      ];
      let text = "";
      try {
        for await (const delta of this.options.llm.stream({ messages, task: "reply", ...(signal ? { signal } : {}) })) {
          text += delta;
          onDelta?.(delta);
        }
      } catch (error) {
        if (signal?.aborted) return undefined;
        throw error;
      }
      if (signal?.aborted) return undefined;
      if (options.recordReply === false) return text;
      if (!(await this.options.record([{ role: "agent", content: text }]))) return undefined;
      this.recorded = transcript.length + 1;
      return text;
    });
  }

  async hear(transcript: readonly TranscriptItem[]): Promise<boolean> {
    return this.options.serialize(() => this.recordNew(transcript));
  }

  private async recordNew(transcript: readonly TranscriptItem[]): Promise<boolean> {
    const unseen = transcript.slice(this.recorded);
    if (unseen.length > 0 && !(await this.options.record(unseen))) return false;
    this.recorded = transcript.length;
    return true;
  }
}

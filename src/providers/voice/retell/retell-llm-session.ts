import type { Logger } from "pino";
import type { CallAction } from "../../../domain/tools/ports.js";
import type { TranscriptItem, VoiceAgent } from "../../../domain/calls/ports.js";
import { isRecord } from "../vendor-http.js";

/** The socket as this session uses it: text frames out, and closing. */
export interface RetellSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** The call behind one Custom LLM socket, as the domain gives it. */
export interface RetellLlmCall {
  callId: string;
  agent: VoiceAgent;
  /** What of the call is in the thread's history already: Retell reconnects a socket mid-call (`auto_reconnect`). */
  history: TranscriptItem[];
  /** What the agent says first, as Retell's begin message (an inbound caller's greeting); the callee speaks first without one. */
  greeting?: string;
  /** Makes the call ongoing if it is not yet (Retell's webhook may come later); false once the call is over. */
  connect(): Promise<boolean>;
  /** Whether the agent's reply closes the conversation: Retell is then told to hang up (`end_call`). */
  closesConversation(reply: string): boolean;
  log: Logger;
}

type Interaction = "ping_pong" | "call_details" | "update_only" | "response_required" | "reminder_required";

interface RetellRequest {
  interaction: Interaction;
  responseId: number | undefined;
  transcript: TranscriptItem[];
  timestamp: number | undefined;
}

const interactions: readonly Interaction[] = ["ping_pong", "call_details", "update_only", "response_required", "reminder_required"];

/** One of Retell's frames, or a reason it is not one. */
export function parseRetellRequest(text: string): RetellRequest | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return "frames must be JSON objects";
  }
  if (!isRecord(parsed)) return "frames must be JSON objects";
  const interaction = interactions.find((candidate) => candidate === parsed["interaction_type"]);
  if (!interaction) return "unknown interaction_type";
  const id = parsed["response_id"];
  const transcript = Array.isArray(parsed["transcript"]) ? parsed["transcript"] : [];
  return {
    interaction,
    responseId: typeof id === "number" && Number.isSafeInteger(id) && id >= 0 ? id : undefined,
    transcript: transcript.flatMap((item): TranscriptItem[] =>
      isRecord(item) && (item["role"] === "agent" || item["role"] === "user") && typeof item["content"] === "string"
        ? [{ role: item["role"], content: item["content"] }]
        : [],
    ),
    timestamp: typeof parsed["timestamp"] === "number" ? parsed["timestamp"] : undefined,
  };
}

/**
 * Parley's side of Retell's Custom LLM WebSocket for one call (docs.retellai.com, "LLM WebSocket"). It opens with a
 * `config` frame and a begin message (response_id 0): empty on an outbound call, whose callee speaks first, and the
 * greeting on an inbound one, whose caller the agent greets. It answers `ping_pong`, and answers each
 * `response_required` / `reminder_required` with the agent's reply streamed as `response` frames, the last one
 * `content_complete: true` whatever happened (a model that fails still ends its turn, so that Retell never waits in
 * silence). A newer `response_id` makes the one in progress stale: it is
 * aborted and nothing more of it is sent.
 *
 * The agent's own transcript is kept here: Retell's user utterances are appended as they come (by their count,
 * since Retell's transcript holds the agent's lines as spoken, possibly cut short by a barge-in), and each reply as
 * the agent generated it. That is what goes to the thread's history; Retell's own transcript arrives with the
 * `call_ended` webhook and becomes the call's `transcript_object`.
 */
export class RetellLlmSession {
  private readonly items: TranscriptItem[] = [];
  private usersSeen = 0;
  private latestId = -1;
  private current: AbortController | undefined;
  private closed = false;
  /** Once the call is ongoing it stays so until it ends, which the agent's own recording then notices. */
  private live = false;

  constructor(
    private readonly call: RetellLlmCall,
    private readonly socket: RetellSocket,
  ) {
    this.items.push(...call.history);
    this.usersSeen = call.history.filter((item) => item.role === "user").length;
  }

  start(): void {
    const greeting = this.call.greeting ?? "";
    this.send({ response_type: "config", config: { auto_reconnect: true, call_details: true } });
    this.send({ response_type: "response", response_id: 0, content: greeting, content_complete: true, end_call: false });
    if (greeting === "") return;
    this.items.push({ role: "agent", content: greeting });
    void this.call.agent.hear([...this.items]).catch((error: unknown) => this.call.log.warn({ err: error, callId: this.call.callId }, "recording a Retell call's greeting failed"));
  }

  receive(text: string): void {
    const request = parseRetellRequest(text);
    if (typeof request === "string") {
      this.call.log.warn({ callId: this.call.callId, problem: request }, "an unreadable frame on the Retell LLM socket");
      return;
    }
    switch (request.interaction) {
      case "ping_pong":
        this.send({ response_type: "ping_pong", timestamp: request.timestamp ?? Date.now() });
        return;
      case "call_details":
      case "update_only":
        return;
      case "response_required":
      case "reminder_required":
        if (request.responseId === undefined) return;
        void this.respond(request.responseId, request.transcript).catch((error: unknown) =>
          this.call.log.error({ err: error, callId: this.call.callId }, "answering Retell failed"),
        );
    }
  }

  /** The socket closed: whatever is in progress stops. */
  socketClosed(): void {
    this.closed = true;
    this.current?.abort();
  }

  close(code: number, reason: string): void {
    this.socketClosed();
    this.socket.close(code, reason);
  }

  private async respond(responseId: number, transcript: TranscriptItem[]): Promise<void> {
    if (responseId <= this.latestId) return;
    this.latestId = responseId;
    this.current?.abort();
    const controller = new AbortController();
    this.current = controller;
    const isCurrent = () => !this.closed && this.latestId === responseId && !controller.signal.aborted;
    this.takeUserUtterances(transcript);
    this.live ||= await this.call.connect();
    if (!this.live) {
      if (isCurrent()) this.send({ response_type: "response", response_id: responseId, content: "", content_complete: true, end_call: true });
      return;
    }
    const say = (content: string) => {
      if (isCurrent()) this.send({ response_type: "response", response_id: responseId, content, content_complete: false, end_call: false });
    };
    const actions: CallAction[] = [];
    let reply: string | undefined;
    try {
      reply = await this.call.agent.respond([...this.items], say, controller.signal, {
        // Retell speaks whatever streams in: the words to say while a tool runs are a delta like the model's.
        onToolSpeech: (filler) => say(` ${filler}`),
        onCallAction: (action) => actions.push(action),
      });
    } catch (error) {
      this.call.log.warn({ err: error, callId: this.call.callId }, "the agent failed to answer Retell");
      if (isCurrent()) this.send({ response_type: "response", response_id: responseId, content: "", content_complete: true, end_call: false });
      return;
    }
    if (!isCurrent()) return;
    if (reply === undefined) {
      // Not aborted, so the call is over: Retell is told to hang up.
      this.send({ response_type: "response", response_id: responseId, content: "", content_complete: true, end_call: true });
      return;
    }
    this.items.push({ role: "agent", content: reply });
    const transfer = actions.find((action) => action.kind === "transfer_call");
    // Retell carries out both once the response has been spoken: it hangs up, or it dials `transfer_number`.
    if (transfer) this.send({ response_type: "response", response_id: responseId, content: "", content_complete: true, end_call: false, transfer_number: transfer.number });
    else {
      const ends = actions.some((action) => action.kind === "end_call") || this.call.closesConversation(reply);
      this.send({ response_type: "response", response_id: responseId, content: "", content_complete: true, end_call: ends });
    }
  }

  private takeUserUtterances(transcript: TranscriptItem[]): void {
    const users = transcript.filter((item) => item.role === "user" && item.content.trim() !== "");
    for (const utterance of users.slice(this.usersSeen)) this.items.push({ role: "user", content: utterance.content });
    this.usersSeen = Math.max(this.usersSeen, users.length);
  }

  private send(frame: Record<string, unknown>): void {
    if (!this.closed) this.socket.send(JSON.stringify(frame));
  }
}

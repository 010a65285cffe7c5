import type { ToolCallRequest, ToolSpec } from "../../providers/llm/types.js";
import { jsonSchemaProblem } from "../shared/json-schema.js";
import type { ToolDefinition } from "./tool-definitions.js";
import { signToolRequest, TOOL_SIGNATURE_HEADER } from "./tool-signature.js";
import type { CallAction, ToolPostResult, ToolTransport } from "./ports.js";

/** Where a tool is called from: what a tool can do depends on it (a chat cannot be hung up or transferred). */
export type ToolChannel = "chat" | "web_call" | "phone_call";

/** What a tool request says about where it comes from, besides the tool's name and arguments. */
export interface ToolCallOrigin {
  threadId: string;
  conversationId: number;
  /** The user's message the turn answers; null for a proactive turn. */
  messageId: string | null;
  call: { id: string; appointment_opening_id: string | null } | null;
  /** The thread's JSON input. */
  context: Record<string, unknown>;
}

export type ToolCallStatus = "ok" | "error" | "timeout";

/** One call as stored in the reply's `extras.tool_calls` and sent in its `tool.called` event. */
export interface ToolCallRecord {
  id: string;
  name: string;
  /** The arguments the model wrote, parsed; the text itself when it is not JSON. */
  arguments: unknown;
  status: ToolCallStatus;
  /** A JSON answer parsed, any other answer as text; `{"error": …}` when the call failed. */
  result: unknown;
  duration_ms: number;
}

export interface ToolCallDone {
  record: ToolCallRecord;
  /** The result as the model reads it. */
  content: string;
  action?: CallAction;
}

/**
 * Runs the tools of one agent turn. An http tool's arguments are checked against its `parameters` before anything is
 * sent; the request is signed with the project's tool secret. Every failure (unknown tool, invalid arguments, a
 * receiver that errs, is late or is refused) becomes `{"error": …}` for the model, and the turn goes on. `end_call` and
 * `transfer_call` send nothing: they return the action the call layer carries out.
 */
export class ToolRunner {
  private readonly offered: ToolDefinition[];

  constructor(
    tools: readonly ToolDefinition[],
    private readonly secret: string | undefined,
    private readonly transport: ToolTransport,
    channel: ToolChannel,
    private readonly clock: () => number = Date.now,
  ) {
    this.offered = tools.filter((tool) => tool.type === "http" || (tool.type === "end_call" && channel !== "chat") || (tool.type === "transfer_call" && channel === "phone_call"));
  }

  /** The tools offered to the model. */
  specs(): ToolSpec[] {
    return this.offered.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters, ...(tool.type === "end_call" ? { endsCall: true } : {}) }));
  }

  /** What to say in a call while the named tool runs: an http tool's `speak_during_execution`, else "". */
  speechFor(name: string): string {
    const tool = this.offered.find((candidate) => candidate.name === name);
    return tool?.type === "http" ? tool.speak_during_execution : "";
  }

  async run(call: ToolCallRequest, origin: ToolCallOrigin): Promise<ToolCallDone> {
    const started = this.clock();
    const args = parseArguments(call.arguments);
    const finish = (status: ToolCallStatus, result: unknown, content: string, action?: CallAction): ToolCallDone => ({
      record: { id: call.id, name: call.name, arguments: args.ok ? args.value : call.arguments, status, result, duration_ms: Math.max(0, this.clock() - started) },
      content,
      ...(action ? { action } : {}),
    });
    const failed = (message: string, status: ToolCallStatus = "error") => finish(status, { error: message }, JSON.stringify({ error: message }));
    const tool = this.offered.find((candidate) => candidate.name === call.name);
    if (!tool) return failed(`there is no tool named '${call.name}'`);
    if (!args.ok) return failed(`the arguments are not valid JSON: ${args.problem}`);
    const problem = jsonSchemaProblem(tool.parameters, args.value);
    if (problem) return failed(`the arguments do not match the tool's parameters: ${problem}`);
    switch (tool.type) {
      case "end_call":
        return finish("ok", { ok: true }, JSON.stringify({ ok: true, note: "The call ends after your last sentence." }), { kind: "end_call" });
      case "transfer_call":
        return finish("ok", { ok: true }, JSON.stringify({ ok: true, note: "The caller is transferred after your last sentence." }), { kind: "transfer_call", number: tool.number });
      case "http": {
        if (!this.secret) return failed("the project has no tool secret to sign the request with");
        const body = JSON.stringify({
          tool: tool.name,
          arguments: args.value,
          thread_id: origin.threadId,
          conversation_id: origin.conversationId,
          message_id: origin.messageId,
          call: origin.call,
          context: origin.context,
        });
        const answer = await this.transport.post({
          url: tool.url,
          body,
          headers: { "content-type": "application/json", [TOOL_SIGNATURE_HEADER]: signToolRequest(body, this.secret, this.clock()) },
          timeoutMs: tool.timeout_ms,
        });
        return this.outcome(answer, tool.timeout_ms, finish, failed);
      }
    }
  }

  private outcome(
    answer: ToolPostResult,
    timeoutMs: number,
    finish: (status: ToolCallStatus, result: unknown, content: string) => ToolCallDone,
    failed: (message: string, status?: ToolCallStatus) => ToolCallDone,
  ): ToolCallDone {
    switch (answer.kind) {
      case "timeout":
        return failed(`the tool did not answer within ${timeoutMs} ms`, "timeout");
      case "refused":
        return failed(`the tool's address is refused: ${answer.reason}`);
      case "failed":
        return failed(`the tool could not be reached: ${answer.reason}`);
      case "answered": {
        if (answer.status < 200 || answer.status > 299) return failed(`the tool answered with HTTP status ${answer.status}`);
        return finish("ok", resultValue(answer.body, answer.contentType, answer.truncated), answer.body);
      }
    }
  }
}

function parseArguments(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  try {
    return { ok: true, value: JSON.parse(text === "" ? "{}" : text) };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : "unparseable" };
  }
}

/** A complete JSON answer is kept as JSON; anything else, a JSON answer cut at the size limit included, as text. */
function resultValue(body: string, contentType: string, truncated: boolean): unknown {
  if (truncated || !/\bjson\b/i.test(contentType)) return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

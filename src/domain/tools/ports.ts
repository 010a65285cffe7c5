/** One signed POST to a tool's receiver, as the runner hands it to the transport. */
export interface ToolPost {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** What came of it: a 2xx body (its first `MAX_TOOL_RESULT_BYTES`), another status, no answer in time, or no answer at all. */
export type ToolPostResult =
  | { kind: "answered"; status: number; contentType: string; body: string; truncated: boolean }
  | { kind: "timeout" }
  | { kind: "refused"; reason: string }
  | { kind: "failed"; reason: string };

/** A receiver's answer is cut here before the model sees it. */
export const MAX_TOOL_RESULT_BYTES = 16 * 1024;

/** How tool requests leave the service: the port the domain owns, implemented over HTTP in providers/tools. */
export interface ToolTransport {
  post(request: ToolPost): Promise<ToolPostResult>;
}

/** What the call layer must do once the agent's last sentence has been played: the effect of `end_call` and `transfer_call`. */
export type CallAction = { kind: "end_call" } | { kind: "transfer_call"; number: string };

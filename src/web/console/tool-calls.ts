import { html } from "htm/preact";
import type { ToolCall } from "../../../packages/client/src/index.js";
import { labelOf } from "./labels.js";

/** A message's `extras.tool_calls`, when it has any: the tool calls of the agent's turn. */
export function toolCallsOf(extras: Record<string, unknown>): ToolCall[] {
  const calls = extras["tool_calls"];
  return Array.isArray(calls) ? (calls as ToolCall[]) : [];
}

function shown(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** The tool calls of one agent turn, inline where the turn is shown: each with its arguments, status, result and duration. */
export function ToolCalls({ calls }: { calls: ToolCall[] }) {
  if (calls.length === 0) return null;
  return html`<ul class="tool-calls" aria-label="Tool calls">
    ${calls.map(
      (call) => html`<li key=${call.id} class=${`tool-call ${call.status}`}>
        <details>
          <summary>
            <code>${call.name}</code> · <span class=${`tool-status ${call.status}`} title=${call.status}>${labelOf("tool_status", call.status)}</span> · ${call.duration_ms} ms
          </summary>
          <dl>
            <dt>Arguments</dt>
            <dd><pre>${shown(call.arguments)}</pre></dd>
            <dt>Result</dt>
            <dd><pre>${shown(call.result)}</pre></dd>
          </dl>
        </details>
      </li>`,
    )}
  </ul>`;
}

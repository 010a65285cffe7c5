import type { LlmOutput } from "./types.js";

/** The outputs of an adapter that only writes text (no tool calls, no usage reported). */
export async function* textOutputs(deltas: AsyncIterable<string>): AsyncGenerator<LlmOutput> {
  for await (const text of deltas) yield { type: "text", text };
}

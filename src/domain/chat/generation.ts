import type { AgentTask, LlmProvider, PromptMessage } from "../../providers/llm/types.js";
import { ProviderError } from "../../providers/llm/types.js";
import { UpstreamError } from "../shared/errors.js";

/** Runs the provider to the end, passing each delta on; a provider failure becomes an upstream error (timed out, when it was). */
export async function generateText(
  provider: LlmProvider,
  messages: PromptMessage[],
  task: AgentTask,
  onToken?: (token: string) => void,
): Promise<string> {
  let text = "";
  try {
    for await (const delta of provider.stream({ messages, task })) {
      text += delta;
      onToken?.(delta);
    }
  } catch (error) {
    if (error instanceof ProviderError) {
      throw new UpstreamError(`Model provider failed: ${error.message}`, error.options.timedOut ?? false);
    }
    throw error;
  }
  return text;
}

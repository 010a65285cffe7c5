import type { PromptMessage } from "../../providers/llm/types.js";
import type { MessageRecord } from "../history/messages-repository.js";

/** `{{key}}` filled from the thread's JSON context; unknown keys become empty, objects their JSON. */
export function fillTemplate(template: string, context: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_match, key: string) => {
    const value = context[key];
    if (value === undefined || value === null) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

/**
 * One formatter per time zone, with the text it last gave: making a formatter costs more than the rest of a prompt,
 * and formatting with it a good part of what is left, while the text (to the minute) is the same for every turn of
 * a second. Zone names are case-insensitive, so the key is lower case, which also bounds the map by the number of zones.
 */
const localTimeFormats = new Map<string, { format: Intl.DateTimeFormat; second: number; text: string }>();

export function localTime(timezone: string, now: Date): string {
  const key = timezone.toLowerCase();
  const second = Math.floor(now.getTime() / 1000);
  let entry = localTimeFormats.get(key);
  if (!entry) {
    const format = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      weekday: "long",
      year: "numeric",
      month: "long",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hour12: false,
    });
    entry = { format, second, text: format.format(now) };
    localTimeFormats.set(key, entry);
  } else if (entry.second !== second) {
    entry.second = second;
    entry.text = entry.format.format(now);
  }
  return entry.text;
}

export interface PromptInput {
  systemPrompt: string;
  context: Record<string, unknown>;
  timezone: string;
  now: Date;
  history: Pick<MessageRecord, "role" | "content">[];
  /** Appended after the history, e.g. follow-up or summary instructions. */
  instruction?: string;
}

/** The system prompt with the thread's context, timezone and local time, then the conversation's history. */
export function buildPrompt(input: PromptInput): PromptMessage[] {
  const system = `${fillTemplate(input.systemPrompt, input.context)}\n\nThe user's timezone is ${input.timezone}; their local time is ${localTime(input.timezone, input.now)}.`;
  const messages: PromptMessage[] = [{ role: "system", content: system }];
  for (const message of input.history) messages.push({ role: message.role, content: message.content });
  if (input.instruction) messages.push({ role: "system", content: input.instruction });
  return messages;
}

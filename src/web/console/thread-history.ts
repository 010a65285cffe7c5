import type { Message, MessagePage, SearchMatch } from "../../../packages/client/src/index.js";

/**
 * The part of a thread's history on screen: a window of consecutive messages, with the cursor that fetches the
 * messages just before it (null at the first message) and the one that fetches those just after it (null when the
 * window reaches the newest message).
 */
export interface HistoryWindow {
  messages: Message[];
  older: string | null;
  newer: string | null;
}

export const latestWindow = (page: MessagePage): HistoryWindow => ({ messages: page.messages, older: page.pagination.cursor, newer: null });

export const matchWindow = (match: SearchMatch): HistoryWindow => ({
  messages: match.context.map((message) => ({ extras: {}, ...message })),
  older: match.prev_cursor,
  newer: match.next_cursor,
});

export const withOlder = (window: HistoryWindow, page: MessagePage): HistoryWindow => ({
  ...window,
  messages: [...page.messages, ...window.messages],
  older: page.pagination.cursor,
});

export const withNewer = (window: HistoryWindow, page: MessagePage): HistoryWindow => ({
  ...window,
  messages: [...window.messages, ...page.messages],
  newer: page.pagination.cursor,
});

/** Adds live messages at the newest edge; a message already shown (from the chat reply or a replay) is not repeated. */
export function withLive(window: HistoryWindow, messages: Message[]): HistoryWindow {
  if (window.newer !== null) return window;
  const shown = new Set(window.messages.map((message) => message.message_id));
  const fresh = messages.filter((message) => !shown.has(message.message_id));
  return fresh.length === 0 ? window : { ...window, messages: [...window.messages, ...fresh] };
}

/**
 * Whether the agent's reply closes the conversation, so that a provider that can hang up (Retell's `end_call`)
 * does. Parley's agents have no separate "end the call" signal: a reply that ends in a farewell ("…Goodbye!",
 * "Bye now.") is taken as one. Only the end counts, so "say goodbye to long waits, we open at 9" keeps the line open.
 */
export function replyClosesConversation(reply: string): boolean {
  return /\b(good-?\s?bye|bye(\s+now|\s+bye)?|farewell)\s*[.!]*\s*$/i.test(reply.trim());
}

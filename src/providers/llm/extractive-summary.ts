import { closeSentence, splitSentences } from "../../domain/shared/text/sentences.js";
import { tokenize } from "../../domain/shared/text/tokens.js";
import type { PromptMessage } from "./types.js";

/** At most this many sentences per side, so a summary keeps 2–4 sentences when both sides spoke. */
const SENTENCES_PER_ROLE = 2;

export const EMPTY_SUMMARY = "There is nothing to summarize yet.";

interface Sentence {
  role: "user" | "assistant";
  position: number;
  text: string;
  tokens: string[];
  score: number;
}

/**
 * An extractive summary: every user and assistant sentence is scored by the summed inverse frequency of its distinct
 * tokens across the whole conversation (a word found in one sentence weighs 1, in n sentences 1/n), the best
 * two of each side are kept in their original order, and each side is introduced by who said it.
 */
export function extractiveSummary(messages: readonly PromptMessage[]): string {
  const sentences: Omit<Sentence, "score">[] = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    for (const text of splitSentences(message.content)) {
      sentences.push({ role: message.role, position: sentences.length, text, tokens: [...new Set(tokenize(text))] });
    }
  }
  const frequency = new Map<string, number>();
  for (const sentence of sentences) {
    for (const token of sentence.tokens) frequency.set(token, (frequency.get(token) ?? 0) + 1);
  }
  const scored: Sentence[] = sentences.map((sentence) => ({
    ...sentence,
    score: sentence.tokens.reduce((sum, token) => sum + 1 / (frequency.get(token) ?? 1), 0),
  }));

  const best = (role: Sentence["role"]): string =>
    scored
      .filter((sentence) => sentence.role === role && sentence.score > 0)
      .sort((a, b) => b.score - a.score || a.position - b.position)
      .slice(0, SENTENCES_PER_ROLE)
      .sort((a, b) => a.position - b.position)
      .map((sentence) => closeSentence(sentence.text))
      .join(" ");

  const parts: string[] = [];
  const user = best("user");
  const agent = best("assistant");
  if (user !== "") parts.push(`The user said: ${user}`);
  if (agent !== "") parts.push(`The agent ${user === "" ? "said" : "answered"}: ${agent}`);
  return parts.length > 0 ? parts.join(" ") : EMPTY_SUMMARY;
}

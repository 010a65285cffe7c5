import { Bm25Index } from "./bm25.js";
import { closeSentence, extractiveSummary } from "./extractive-summary.js";
import { abortedError } from "./provider-errors.js";
import { tokenize } from "./text-tokens.js";
import type { LlmProvider, LlmRequest, PromptMessage } from "./types.js";

export interface KnowledgeEntry {
  question: string;
  answer: string;
}

export interface BuiltinSettings {
  greeting: string;
  fallback: string;
  knowledge: readonly KnowledgeEntry[];
}

/**
 * The least BM25 relevance (score ÷ Σ IDF of the query terms, see `Bm25Match.relevance`) at which the agent answers
 * from the knowledge base. A one-word question whose word appears once in an entry of average length has relevance 1;
 * 0.4 lets a question match when most of its distinctive weight is covered, and sends chatter and off-topic questions
 * to the greeting or the fallback rather than to a wrong answer.
 */
export const MIN_RELEVANCE = 0.4;

const OFFER_PREFIX = "One more thing that may help:";
const CHECK_IN_PREFIX = "Just checking in.";

/** Projects keep their knowledge array for as long as their configuration is cached, so each is indexed once. */
const indexes = new WeakMap<readonly KnowledgeEntry[], Bm25Index>();

function indexFor(knowledge: readonly KnowledgeEntry[]): Bm25Index {
  let index = indexes.get(knowledge);
  if (!index) {
    index = new Bm25Index(knowledge.map((entry) => tokenize(`${entry.question} ${entry.answer}`)));
    indexes.set(knowledge, index);
  }
  return index;
}

function conversationOf(messages: readonly PromptMessage[]): PromptMessage[] {
  return messages.filter((message) => message.role !== "system");
}

/**
 * The best knowledge answer for the last user message when it is relevant enough; otherwise the greeting if that
 * message opens the conversation, else the fallback.
 */
export function builtinReply(settings: BuiltinSettings, messages: readonly PromptMessage[]): string {
  const conversation = conversationOf(messages);
  let lastUser = conversation.length - 1;
  while (lastUser >= 0 && conversation[lastUser]?.role !== "user") lastUser--;
  const question = conversation[lastUser];
  if (!question) return settings.greeting;
  const best = indexFor(settings.knowledge).rank(tokenize(question.content))[0];
  const entry = best && best.relevance >= MIN_RELEVANCE ? settings.knowledge[best.index] : undefined;
  if (entry) return entry.answer;
  return lastUser === 0 ? settings.greeting : settings.fallback;
}

/**
 * A proactive message: the knowledge entry most related to everything the user has said (ranked by BM25 against all
 * user messages) whose answer the agent has not already given; failing that, a check-in built from the greeting. An
 * empty conversation simply gets the greeting.
 */
export function builtinFollowup(settings: BuiltinSettings, messages: readonly PromptMessage[]): string {
  const conversation = conversationOf(messages);
  if (conversation.length === 0) return settings.greeting;
  const said = conversation.filter((message) => message.role === "user").map((message) => message.content);
  const answered = conversation.filter((message) => message.role === "assistant").map((message) => message.content);
  for (const match of indexFor(settings.knowledge).rank(tokenize(said.join("\n")))) {
    const entry = settings.knowledge[match.index];
    if (entry && !answered.some((content) => content.includes(entry.answer.trim()))) {
      return `${OFFER_PREFIX} ${closeSentence(entry.question.trim())} ${entry.answer.trim()}`;
    }
  }
  return `${CHECK_IN_PREFIX} ${settings.greeting}`;
}

export function builtinText(settings: BuiltinSettings, request: Pick<LlmRequest, "task" | "messages">): string {
  switch (request.task) {
    case "reply":
      return builtinReply(settings, request.messages);
    case "followup":
      return builtinFollowup(settings, request.messages);
    case "summary":
    case "analysis":
      return extractiveSummary(request.messages);
  }
}

/** Each word with the whitespace that follows it (leading whitespace rides with the first), so the pieces join back exactly. */
export function wordChunks(text: string): string[] {
  return text.match(/\s*\S+\s*/gu) ?? (text === "" ? [] : [text]);
}

/**
 * The embedded default agent: offline, deterministic, and no language model. It answers from the project's
 * knowledge entries, greets, falls back, follows up and summarizes by the rules above, streamed word by word.
 */
export class BuiltinProvider implements LlmProvider {
  readonly name = "builtin";

  constructor(private readonly settings: BuiltinSettings) {}

  async *stream(request: LlmRequest): AsyncGenerator<string> {
    for (const word of wordChunks(builtinText(this.settings, request))) {
      if (request.signal?.aborted) throw abortedError();
      yield word;
    }
  }
}

import { Bm25Index } from "../../domain/shared/text/bm25.js";
import { closeSentence, wordChunks } from "../../domain/shared/text/sentences.js";
import { tokenize } from "../../domain/shared/text/tokens.js";
import { contextAnswer, fillFromContext, followUp, selfDescription, slotsAskedBy, slotsIn } from "./builtin-dialogue.js";
import { extractiveSummary } from "./extractive-summary.js";
import { abortedError } from "./provider-errors.js";
import type { LlmOutput, LlmProvider, LlmRequest, PromptMessage } from "./types.js";

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
const FAREWELL = "Thank you for calling. Goodbye!";

/** Words that end with a goodbye ("…that's all, bye.", "Goodbye!"); "say goodbye to long waits, we open at 9" does not. */
function isFarewell(text: string): boolean {
  return /\b(good-?\s?bye|bye(\s+now|\s+bye)?|farewell)\s*[.!]*\s*$/i.test(text.trim());
}
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

/** The last message of `role` before index `before`. */
function lastOf(messages: readonly PromptMessage[], role: PromptMessage["role"], before = messages.length): PromptMessage | undefined {
  for (let index = before - 1; index >= 0; index--) if (messages[index]?.role === role) return messages[index];
  return undefined;
}

function conversationOf(messages: readonly PromptMessage[]): PromptMessage[] {
  return messages.filter((message) => message.role !== "system");
}

/**
 * The reply to the last user message, by the first rule that applies: what the agent is, when asked; a field of
 * the thread's context the user asks about; the details the agent's previous message asked for, when the user gives
 * them; the best knowledge answer when it is relevant enough (or, when that answer asks for details the message
 * already gives, their acknowledgement); otherwise the greeting if the message opens the conversation, else the
 * fallback. `{{key}}` in the agent's texts is filled from the context.
 */
export function builtinReply(settings: BuiltinSettings, messages: readonly PromptMessage[], context: Readonly<Record<string, unknown>> = {}): string {
  const conversation = conversationOf(messages);
  let lastUser = conversation.length - 1;
  while (lastUser >= 0 && conversation[lastUser]?.role !== "user") lastUser--;
  const question = conversation[lastUser];
  if (!question) return fillFromContext(settings.greeting, context);
  const direct = selfDescription(question.content, settings.knowledge) ?? contextAnswer(question.content, context);
  if (direct) return direct;
  const given = slotsIn(question.content);
  const previous = lastOf(conversation, "assistant", lastUser);
  const answered = previous ? followUp(slotsAskedBy(previous.content), given) : undefined;
  if (answered) return answered;
  const best = indexFor(settings.knowledge).rank(tokenize(question.content))[0];
  const entry = best && best.relevance >= MIN_RELEVANCE ? settings.knowledge[best.index] : undefined;
  if (entry) return followUp(slotsAskedBy(entry.answer), given) ?? fillFromContext(entry.answer, context);
  return fillFromContext(lastUser === 0 ? settings.greeting : settings.fallback, context);
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

export function builtinText(
  settings: BuiltinSettings,
  request: Pick<LlmRequest, "task" | "messages">,
  context: Readonly<Record<string, unknown>> = {},
): string {
  switch (request.task) {
    case "reply":
      return builtinReply(settings, request.messages, context);
    case "followup":
      return builtinFollowup(settings, request.messages);
    case "summary":
    case "analysis":
      return extractiveSummary(request.messages);
  }
}

/** The text word by word, as a model streams it; in one piece when nothing reads it as it comes. */
function chunksOf(text: string, request: Pick<LlmRequest, "streamed">): string[] {
  if (request.streamed !== false) return wordChunks(text);
  return text === "" ? [] : [text];
}

/**
 * The embedded default agent: offline, deterministic, and no language model. It answers from the project's
 * knowledge entries and the thread's context, follows up on what it asked, greets, falls back, sends follow-ups and
 * summarizes by the rules above, streamed word by word.
 */
export class BuiltinProvider implements LlmProvider {
  readonly name = "builtin";

  constructor(
    private readonly settings: BuiltinSettings,
    /** The thread's JSON context: the built-in agent cannot read it from the system prompt as a model would. */
    private readonly context: Readonly<Record<string, unknown>> = {},
  ) {}

  async *stream(request: LlmRequest): AsyncGenerator<string> {
    for (const word of chunksOf(builtinText(this.settings, request, this.context), request)) {
      if (request.signal?.aborted) throw abortedError();
      yield word;
    }
  }

  /**
   * The built-in agent calls no http tools. In a call that offers `end_call`, a caller's farewell is answered with a
   * goodbye (the knowledge's, when its answer is one) and the call is ended; its round after that says nothing more.
   */
  async *respond(request: LlmRequest): AsyncGenerator<LlmOutput> {
    if ((request.toolRounds ?? []).length > 0) return;
    const endCall = request.toolChoice === "none" ? undefined : request.tools?.find((tool) => tool.endsCall);
    const lastUser = lastOf(request.messages, "user");
    if (!endCall || !lastUser || !isFarewell(lastUser.content)) {
      for (const word of chunksOf(builtinText(this.settings, request, this.context), request)) {
        if (request.signal?.aborted) throw abortedError();
        yield { type: "text", text: word };
      }
      return;
    }
    const answer = builtinText(this.settings, request, this.context);
    for (const word of chunksOf(isFarewell(answer) ? answer : FAREWELL, request)) yield { type: "text", text: word };
    yield { type: "tool_calls", calls: [{ id: "builtin_end_call", name: endCall.name, arguments: "{}" }] };
  }
}

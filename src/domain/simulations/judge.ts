import { tokenize } from "../shared/text/tokens.js";
import { ProviderError, type LlmProvider, type PromptMessage, type StructuredOutput } from "../../providers/llm/types.js";
import { UpstreamError } from "../shared/errors.js";
import type { Criterion, CriterionResult, Evaluation, Persona, SimulationTurn, StopReason } from "./simulation.js";
import { isNonAnswer, nearDuplicate, sharedWords } from "./text-signals.js";

export interface JudgeInput {
  turns: readonly SimulationTurn[];
  stopReason: StopReason;
  persona: Persona;
  criteria: readonly Criterion[];
  /** The built-in agent's fallback, which is a non-answer whatever its wording. */
  agentFallback?: string;
}

function round(score: number): number {
  return Math.round(Math.min(1, Math.max(0, score)) * 1000) / 1000;
}

/** The verdict follows the required criteria; the score is the mean of all criteria's scores. */
export function verdictOf(results: CriterionResult[], criteria: readonly Criterion[], judge: Evaluation["judge"]): Evaluation {
  const required = new Set(criteria.filter((criterion) => criterion.required).map((criterion) => criterion.key));
  const failed = results.some((result) => required.has(result.key) && !result.passed);
  const mean = results.length === 0 ? 1 : results.reduce((sum, result) => sum + result.score, 0) / results.length;
  return { verdict: failed ? "fail" : "pass", score: round(mean), judge, criteria: results };
}

export function transcriptText(turns: readonly SimulationTurn[]): string {
  return turns.map((turn) => `${turn.role === "user" ? "User" : "Agent"}: ${turn.message}`).join("\n");
}

// ─── The model as judge ──────────────────────────────────────────────────────────────────────────────────────────

/** One property per criterion, each required: a strict schema that both vendors' structured output accept. */
export function judgeSchema(criteria: readonly Criterion[]): StructuredOutput {
  const verdict = {
    type: "object",
    properties: {
      passed: { type: "boolean", description: "Whether the conversation meets the criterion." },
      score: { type: "number", description: "How well it meets the criterion, from 0 (not at all) to 1 (fully)." },
      reasoning: { type: "string", description: "One or two sentences citing what in the conversation decided it." },
    },
    required: ["passed", "score", "reasoning"],
    additionalProperties: false,
  };
  return {
    name: "conversation_evaluation",
    description: "The evaluation of a conversation between a user and an AI agent, one verdict per criterion.",
    schema: {
      type: "object",
      properties: {
        criteria: {
          type: "object",
          properties: Object.fromEntries(criteria.map((criterion) => [criterion.key, verdict])),
          required: criteria.map((criterion) => criterion.key),
          additionalProperties: false,
        },
      },
      required: ["criteria"],
      additionalProperties: false,
    },
  };
}

export function judgePrompt(input: JudgeInput): PromptMessage[] {
  const { persona } = input;
  const context = [
    persona.agentType ? `The agent is a ${persona.agentType}.` : "",
    persona.industry ? `Industry: ${persona.industry}.` : "",
    persona.topic ? `The user's topic: ${persona.topic}.` : "",
    persona.behaviouralPrompt ? `The user was asked to behave like this: ${persona.behaviouralPrompt}` : "",
  ].filter(Boolean);
  const criteria = input.criteria.map((criterion) => `- ${criterion.key}${criterion.required ? " (required)" : ""}: ${criterion.description}`);
  const system = [
    "You evaluate a conversation between a user and an AI agent. Judge the agent, not the user.",
    ...context,
    "Judge the conversation by each of these criteria:",
    ...criteria,
    "For each criterion give passed (true or false), a score from 0 to 1, and a short reasoning that cites the conversation.",
  ].join("\n");
  const ending = { max_turns: "it reached its turn limit", user_ended: "the user ended it", agent_ended: "the agent ended it" }[input.stopReason];
  return [
    { role: "system", content: system },
    { role: "user", content: `The whole conversation (${ending}):\n\n${transcriptText(input.turns)}` },
  ];
}

function parseObject(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end < start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The model's verdicts, or an UpstreamError when its answer does not have the schema's shape. */
export function parseJudgeAnswer(text: string, criteria: readonly Criterion[]): CriterionResult[] {
  const answer = parseObject(text);
  const byKey = isRecord(answer) && isRecord(answer["criteria"]) ? answer["criteria"] : undefined;
  return criteria.map((criterion) => {
    const verdict = byKey?.[criterion.key];
    if (!isRecord(verdict) || typeof verdict["passed"] !== "boolean" || typeof verdict["score"] !== "number" || !Number.isFinite(verdict["score"])) {
      throw new UpstreamError(`The judge's answer has no valid verdict for criterion '${criterion.key}'`);
    }
    const reasoning = typeof verdict["reasoning"] === "string" ? verdict["reasoning"].trim() : "";
    return { key: criterion.key, passed: verdict["passed"], score: round(verdict["score"]), reasoning };
  });
}

/** An answer not in the schema is asked for once more (decisions.md, Simulation): a model's slip is not yet a failed judge. */
const judgeAttempts = 2;

async function judgeAnswerText(provider: LlmProvider, input: JudgeInput, structuredOutput: StructuredOutput): Promise<string> {
  let text = "";
  try {
    for await (const delta of provider.stream({ messages: judgePrompt(input), task: "analysis", structuredOutput })) text += delta;
  } catch (error) {
    // The same mapping as every model call (502, 504 on a timeout), with the judge named.
    if (error instanceof ProviderError) {
      throw new UpstreamError(`The judge's model provider failed: ${error.message}`, error.options.timedOut ?? false);
    }
    throw error;
  }
  return text;
}

/**
 * The model judges the whole transcript against every criterion, answering in the schema above; an UpstreamError
 * when its provider fails or its answer is twice not in the schema.
 */
export async function modelJudge(provider: LlmProvider, input: JudgeInput): Promise<Evaluation> {
  const structuredOutput = judgeSchema(input.criteria);
  for (let attempt = 1; ; attempt += 1) {
    const text = await judgeAnswerText(provider, input, structuredOutput);
    try {
      return verdictOf(parseJudgeAnswer(text, input.criteria), input.criteria, "llm");
    } catch (error) {
      if (!(error instanceof UpstreamError) || attempt >= judgeAttempts) throw error;
    }
  }
}

// ─── The heuristic judge ─────────────────────────────────────────────────────────────────────────────────────────

interface Exchange {
  question: string;
  reply: string;
  earlierReplies: string[];
}

function exchangesOf(turns: readonly SimulationTurn[]): Exchange[] {
  const exchanges: Exchange[] = [];
  const replies: string[] = [];
  turns.forEach((turn, index) => {
    if (turn.role !== "assistant") return;
    const previous = turns[index - 1];
    exchanges.push({ question: previous?.role === "user" ? previous.message : "", reply: turn.message, earlierReplies: [...replies] });
    replies.push(turn.message);
  });
  return exchanges;
}

function quote(text: string): string {
  const flat = text.replace(/\s+/gu, " ").trim();
  return `"${flat.length > 80 ? `${flat.slice(0, 77)}...` : flat}"`;
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? 0 : part / whole;
}

function taskCompletion(exchanges: Exchange[], fallback: string | undefined): CriterionResult {
  const unanswered = exchanges.filter(
    (exchange) =>
      exchange.reply.trim() === "" ||
      isNonAnswer(exchange.reply, fallback) ||
      exchange.earlierReplies.some((earlier) => nearDuplicate(earlier, exchange.reply)),
  );
  const score = ratio(exchanges.length - unanswered.length, exchanges.length);
  const first = unanswered[0];
  const reasoning =
    `${exchanges.length - unanswered.length} of ${exchanges.length} user turns got a substantive answer` +
    (first ? `; not answered, for example: ${quote(first.question)} got ${quote(first.reply)}.` : ".");
  return { key: "task_completion", passed: score >= 0.6, score: round(score), reasoning };
}

/**
 * Without a topic, the conversation's opening message stands for what the user came for, and the reasoning names it
 * as that: the opening message is not reported as a topic the run never had.
 */
function staysOnTopic(exchanges: Exchange[], persona: Persona, turns: readonly SimulationTurn[]): CriterionResult {
  const opening = turns.find((turn) => turn.role === "user")?.message ?? "";
  const subject = persona.topic ? `the topic (${quote(persona.topic)})` : `the opening message (${quote(opening)}; no topic was given)`;
  const topicText = [persona.topic ?? opening, persona.industry ?? ""].join(" ");
  const offTopic = exchanges.filter(
    (exchange) => sharedWords(exchange.reply, topicText).length === 0 && sharedWords(exchange.reply, exchange.question).length === 0,
  );
  const score = ratio(exchanges.length - offTopic.length, exchanges.length);
  const first = offTopic[0];
  const reasoning =
    `${exchanges.length - offTopic.length} of ${exchanges.length} replies share words with ${subject} or with the question they answer` +
    (first ? `; off topic, for example: ${quote(first.reply)}.` : ".");
  return { key: "stays_on_topic", passed: score >= 0.6, score: round(score), reasoning };
}

function noRepetition(exchanges: Exchange[]): CriterionResult {
  const repeats = exchanges.filter((exchange) => exchange.earlierReplies.some((earlier) => nearDuplicate(earlier, exchange.reply)));
  const score = exchanges.length <= 1 ? 1 : 1 - repeats.length / (exchanges.length - 1);
  const first = repeats[0];
  const reasoning =
    repeats.length === 0
      ? `None of the agent's ${exchanges.length} replies repeats an earlier one.`
      : `${repeats.length} of the agent's ${exchanges.length} replies ${repeats.length === 1 ? "repeats" : "repeat"} an earlier one, for example ${quote(first!.reply)}.`;
  return { key: "no_repetition", passed: repeats.length === 0, score: round(score), reasoning };
}

/** Words that describe the conversation rather than its content ("the agent tells…", "the user asks…"). */
const CRITERION_META_WORDS = new Set(
  tokenize(
    "agent user customer caller conversation reply replies answer respond tell say state mention explain describe confirm inform ask give provide offer must should always never",
  ),
);

/** A project criterion judged by keyword evidence: the share of its description's words found in the agent's replies. */
function keywordEvidence(criterion: Criterion, turns: readonly SimulationTurn[]): CriterionResult {
  const said = turns.filter((turn) => turn.role === "assistant").map((turn) => turn.message).join("\n");
  const wanted = [...new Set(tokenize(criterion.description))].filter((word) => !CRITERION_META_WORDS.has(word));
  const saidWords = new Set(tokenize(said));
  const found = wanted.filter((word) => saidWords.has(word));
  const score = ratio(found.length, wanted.length);
  const reasoning =
    wanted.length === 0
      ? "The description has no distinctive words to look for."
      : `Keyword evidence: ${found.length} of the description's ${wanted.length} distinctive words appear in the agent's replies` +
        (found.length > 0 ? ` (${found.slice(0, 8).join(", ")}).` : ".");
  return { key: criterion.key, passed: score >= 0.5, score: round(score), reasoning };
}

/**
 * The judge when no model is available: word-level rules, labelled "heuristic" in the evaluation. Task completion is
 * the share of user turns that got a substantive reply (not empty, not a non-answer or the agent's fallback, not a
 * repeat); staying on topic is the share of replies sharing a word with the topic or with the question they answer;
 * no repetition fails on any reply that repeats an earlier one; a project criterion is the share of its description's
 * words found in the agent's replies.
 */
export function heuristicJudge(input: JudgeInput): Evaluation {
  const exchanges = exchangesOf(input.turns);
  const results = input.criteria.map((criterion) => {
    switch (criterion.key) {
      case "task_completion":
        return taskCompletion(exchanges, input.agentFallback);
      case "stays_on_topic":
        return staysOnTopic(exchanges, input.persona, input.turns);
      case "no_repetition":
        return noRepetition(exchanges);
      default:
        return keywordEvidence(criterion, input.turns);
    }
  });
  return verdictOf(results, input.criteria, "heuristic");
}

import Sentiment from "sentiment";
import { splitSentences } from "../shared/text/sentences.js";
import { normalize, tokenize } from "../shared/text/tokens.js";
import type { LlmProvider, PromptMessage } from "../../providers/llm/types.js";
import { UpstreamError } from "../shared/errors.js";
import { generateText } from "../chat/generation.js";
import type { AnalysisValue, CallAnalysis, UserSentiment } from "./ports.js";
import { speakerLabel } from "./speakers.js";
import { readCall } from "./call-summary.js";

export interface AnalysisField {
  name: string;
  type: "boolean" | "string" | "number";
  description?: string;
}

export interface TranscriptLine {
  role: "agent" | "user";
  content: string;
}

export interface AnalyzeCallInput {
  transcript: TranscriptLine[];
  fields: AnalysisField[];
  provider: LlmProvider;
  providerKind: "builtin" | "openai" | "anthropic";
}

const SENTIMENTS: readonly UserSentiment[] = ["Positive", "Neutral", "Negative", "Unknown"];

/**
 * The analysis of a finished call. A vendor model is asked for all of it as JSON; the built-in agent, which is no
 * language model, reads the call by rules (call-summary.ts for the summary and success, the rules below for the
 * rest), which answer only what they can.
 */
export async function analyzeCall(input: AnalyzeCallInput): Promise<CallAnalysis> {
  return input.providerKind === "builtin" ? builtinAnalysis(input) : await vendorAnalysis(input);
}

function transcriptText(transcript: readonly TranscriptLine[]): string {
  return transcript.map((line) => `${speakerLabel(line.role)}: ${line.content}`).join("\n");
}

function nullFields(fields: readonly AnalysisField[]): Record<string, AnalysisValue> {
  return Object.fromEntries(fields.map((field) => [field.name, null]));
}

function analysisInstructions(fields: readonly AnalysisField[]): string {
  const fieldLines = fields.map(
    (field) => `  - "${field.name}" (${field.type} or null)${field.description ? `: ${field.description}` : ""}`,
  );
  return [
    "You analyze a finished phone call between an AI agent and a user. Reply with one JSON object and nothing else:",
    '- "call_summary": a summary of the call in two to four sentences;',
    '- "user_sentiment": "Positive", "Neutral", "Negative" or "Unknown", the user\'s overall sentiment;',
    '- "call_successful": true if the agent achieved the purpose of the call, false if not, null if the call does not tell;',
    fields.length > 0
      ? `- "custom_analysis_data": an object with exactly these keys:\n${fieldLines.join("\n")}`
      : '- "custom_analysis_data": an empty object.',
    "Use null for anything the transcript does not tell. Do not wrap the JSON in code fences.",
  ].join("\n");
}

/** The JSON object in a model's answer, tolerating code fences or a sentence around it; undefined if there is none. */
function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end < start) return undefined;
  try {
    const value: unknown = JSON.parse(text.slice(start, end + 1));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function typedValue(field: AnalysisField, value: unknown): AnalysisValue {
  if (field.type === "number") return typeof value === "number" && Number.isFinite(value) ? value : null;
  return typeof value === field.type ? (value as string | boolean) : null;
}

/**
 * Asks the model for the whole analysis and keeps only what has the declared shape. An answer that is not JSON, or a
 * model that fails (the call has ended; its analysis should not fail with it), leaves the built-in summary and
 * nothing else.
 */
async function vendorAnalysis(input: AnalyzeCallInput): Promise<CallAnalysis> {
  const messages: PromptMessage[] = [
    { role: "system", content: analysisInstructions(input.fields) },
    { role: "user", content: `The call's transcript:\n\n${transcriptText(input.transcript)}` },
  ];
  let answer: Record<string, unknown> | undefined;
  try {
    answer = parseJsonObject(await generateText(input.provider, messages, "analysis"));
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
  }
  const summary = answer?.["call_summary"];
  const sentiment = SENTIMENTS.find((candidate) => candidate === answer?.["user_sentiment"]);
  const successful = answer?.["call_successful"];
  const rawCustom = answer?.["custom_analysis_data"];
  const custom = typeof rawCustom === "object" && rawCustom !== null ? (rawCustom as Record<string, unknown>) : {};
  return {
    call_summary:
      typeof summary === "string" && summary.trim() !== "" ? summary.trim() : readCall(input.transcript).summary,
    user_sentiment: sentiment ?? "Unknown",
    call_successful: typeof successful === "boolean" ? successful : null,
    custom_analysis_data: Object.fromEntries(input.fields.map((field) => [field.name, typedValue(field, custom[field.name])])),
  };
}

const sentimentAnalyzer = new Sentiment();

/**
 * AFINN-165 word scores summed over everything the user said, with the package's negation handling ("not good");
 * "Unknown" exactly when the user said no word at all.
 */
function userSentiment(transcript: readonly TranscriptLine[]): UserSentiment {
  const said = transcript.filter((line) => line.role === "user").map((line) => line.content).join("\n");
  if (!/[\p{L}\p{N}]/u.test(said)) return "Unknown";
  const result = sentimentAnalyzer.analyze(said);
  if (result.score > 1) return "Positive";
  if (result.score < -1) return "Negative";
  return "Neutral";
}

const NEGATION = /\b(?:no|not|never|nothing|none|neither|nor|cannot)\b|n['’]t\b/u;
/** Set phrases with a negation word that negate nothing ("No problem, your table is booked"). */
const IDIOMS = /\b(?:no (?:problem|worries)|not a problem|never mind)\b/gu;
const CONDITION = /\b(?:if|whether|unless)\b/u;
const YES = /^(?:yes|yeah|yep|yup|sure|of course|absolutely|definitely|certainly|correct|right|please do|i do|i would)\b/u;
const NO = /^(?:no|nope|nah|not really|never|i don['’]t|i do not|i wouldn['’]t)\b/u;

/** The words of a field's name ("wants_callback", "appointmentBooked"), as the built-in agent's tokenizer keys them. */
function nameTerms(name: string): string[] {
  return [...new Set(tokenize(name.replace(/([a-z\d])([A-Z])/gu, "$1 $2").replace(/[_-]+/gu, " ")))];
}

/**
 * A yes/no field decided by keyword evidence, or null. Evidence is a sentence that contains every word of the field's
 * name (stemmed, common words left out): a statement by either side counts as true, or as false when it holds a
 * negation ("no", "not", "n't"…); a conditional ("if", "whether") or a question counts for nothing, except that a
 * question from the agent answered by a reply that starts with yes or no counts as that answer. When the evidence
 * changes during the call, the latest wins; with none, or a name without distinctive words, the field stays null.
 */
function booleanEvidence(field: AnalysisField, transcript: readonly TranscriptLine[]): boolean | null {
  const terms = nameTerms(field.name);
  if (terms.length === 0) return null;
  let decision: boolean | null = null;
  for (const [index, line] of transcript.entries()) {
    for (const sentence of splitSentences(line.content)) {
      const tokens = new Set(tokenize(sentence));
      if (!terms.every((term) => tokens.has(term))) continue;
      const text = normalize(sentence).replace(IDIOMS, "");
      if (CONDITION.test(text)) continue;
      if (!sentence.trimEnd().endsWith("?")) {
        decision = !NEGATION.test(text);
        continue;
      }
      const reply = transcript[index + 1];
      if (line.role !== "agent" || reply?.role !== "user") continue;
      const answer = normalize(reply.content).replace(/^[^\p{L}]+/u, "");
      if (YES.test(answer)) decision = true;
      else if (NO.test(answer)) decision = false;
    }
  }
  return decision;
}

const WEEKDAY = /\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|tonight|next week)\b/giu;
const TIME = /\b(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|\d{1,2} o'?clock|noon|midnight)/giu;
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/gu;
const PHONE = /\+?\d[\d\s().-]{6,}\d/gu;
const NAME = /\b(?:[Mm]y name is|[Tt]his is|I am|I'm)\s+(\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+)?)/gu;
const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
const NUMBER = new RegExp(`\\b(?:\\d+(?:\\.\\d+)?|${NUMBER_WORDS.join("|")})\\b`, "giu");
/** Words a field name stands for when callers rarely say the name itself ("party_size": "four people"). */
const RELATED_WORDS: Record<string, string[]> = { party: ["people", "guests", "persons"], size: ["people", "guests", "persons"], guests: ["people", "persons"], people: ["guests", "persons"] };

/**
 * The last match of `pattern` in what the caller said; null when there is none. The agent's words are left out: its
 * opening hours are no preferred day, and its own name no caller's name.
 */
function lastMatch(transcript: readonly TranscriptLine[], pattern: RegExp, group = 0): string | null {
  const said = transcript.filter((line) => line.role === "user").map((line) => line.content).join("\n");
  return [...said.matchAll(pattern)].at(-1)?.[group]?.trim() ?? null;
}

/** A text field read by what its name asks for: a day or date, a time, a name, an email address, a phone number. */
function textEvidence(field: AnalysisField, transcript: readonly TranscriptLine[]): string | null {
  const words = field.name.replace(/([a-z\d])([A-Z])/gu, "$1 $2").toLowerCase().split(/[\s_-]+/u);
  const has = (...names: string[]) => names.some((name) => words.includes(name));
  if (has("email")) return lastMatch(transcript, EMAIL);
  if (has("phone")) return lastMatch(transcript, PHONE);
  if (has("name")) return lastMatch(transcript, NAME, 1);
  if (has("day", "date")) {
    const day = lastMatch(transcript, WEEKDAY);
    return day ? day.charAt(0).toUpperCase() + day.slice(1).toLowerCase() : null;
  }
  if (has("time")) return lastMatch(transcript, TIME);
  return null;
}

/** A number field: the last number in a sentence that names the field's subject ("a table for 4 people"). */
function numberEvidence(field: AnalysisField, transcript: readonly TranscriptLine[]): number | null {
  const words = field.name.replace(/([a-z\d])([A-Z])/gu, "$1 $2").toLowerCase().split(/[\s_-]+/u).filter((word) => word.length > 2);
  const subjects = [...new Set(words.flatMap((word) => [word, ...(RELATED_WORDS[word] ?? [])]))];
  if (subjects.length === 0) return null;
  const mentions = new RegExp(`\\b(?:${subjects.join("|")})\\b`, "iu");
  let value: number | null = null;
  for (const line of transcript) {
    for (const sentence of splitSentences(line.content)) {
      if (!mentions.test(sentence)) continue;
      const found = [...sentence.matchAll(NUMBER)].at(-1)?.[0]?.toLowerCase();
      if (found === undefined) continue;
      const index = NUMBER_WORDS.indexOf(found);
      value = index >= 0 ? index : Number(found);
    }
  }
  return value;
}

/**
 * The built-in analysis: the reading of call-summary.ts (a summary of what the caller asked and the agent answered,
 * and whether the caller was helped; a caller who never said a word was not), the user's sentiment by word scores,
 * yes/no fields from keyword evidence, and text and number fields where the call says them.
 */
function builtinAnalysis(input: AnalyzeCallInput): CallAnalysis {
  const reading = readCall(input.transcript);
  const sentiment = userSentiment(input.transcript);
  const custom = nullFields(input.fields);
  for (const field of input.fields) {
    if (field.type === "boolean") custom[field.name] = booleanEvidence(field, input.transcript);
    else if (field.type === "string") custom[field.name] = textEvidence(field, input.transcript);
    else custom[field.name] = numberEvidence(field, input.transcript);
  }
  return {
    call_summary: reading.summary,
    user_sentiment: sentiment,
    call_successful: sentiment === "Unknown" ? false : reading.successful,
    custom_analysis_data: custom,
  };
}

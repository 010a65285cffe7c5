import Sentiment from "sentiment";
import { extractiveSummary, splitSentences } from "../../providers/llm/extractive-summary.js";
import { normalize, tokenize } from "../../providers/llm/text-tokens.js";
import type { LlmProvider, PromptMessage } from "../../providers/llm/types.js";
import { UpstreamError } from "../shared/errors.js";
import { generateText } from "../chat/generation.js";
import { roleOfSpeaker, speakerLabel } from "../../providers/voice/speakers.js";

export type UserSentiment = "Positive" | "Neutral" | "Negative" | "Unknown";
export type AnalysisValue = string | number | boolean | null;

export interface CallAnalysis {
  call_summary: string;
  user_sentiment: UserSentiment;
  call_successful: boolean | null;
  custom_analysis_data: Record<string, AnalysisValue>;
}

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
 * language model, summarizes extractively and the rest comes from the rules below, which answer only what they can.
 */
export async function analyzeCall(input: AnalyzeCallInput): Promise<CallAnalysis> {
  return input.providerKind === "builtin" ? builtinAnalysis(input) : vendorAnalysis(input);
}

function promptMessages(transcript: readonly TranscriptLine[]): PromptMessage[] {
  return transcript.map((line) => ({ role: roleOfSpeaker(line.role), content: line.content }));
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
 * model that fails (the call has ended; its analysis should not fail with it), leaves an extractive summary and
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
      typeof summary === "string" && summary.trim() !== "" ? summary.trim() : extractiveSummary(promptMessages(input.transcript)),
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

/**
 * The built-in agent's analysis: its own extractive summary (what it streams for the "analysis" task), the user's
 * sentiment by word scores, success decided only when the user never said a word (nothing was achieved), and yes/no
 * fields from keyword evidence; text and number fields stay null.
 */
async function builtinAnalysis(input: AnalyzeCallInput): Promise<CallAnalysis> {
  const summary = await generateText(input.provider, promptMessages(input.transcript), "analysis");
  const sentiment = userSentiment(input.transcript);
  const userSpoke = sentiment !== "Unknown";
  const custom = nullFields(input.fields);
  for (const field of input.fields) {
    if (field.type === "boolean") custom[field.name] = booleanEvidence(field, input.transcript);
  }
  return {
    call_summary: summary.trim(),
    user_sentiment: sentiment,
    call_successful: userSpoke ? null : false,
    custom_analysis_data: custom,
  };
}

import { closeSentence, splitSentences } from "../shared/text/sentences.js";
import { tokenize } from "../shared/text/tokens.js";
import type { TranscriptLine } from "./call-analysis.js";

/** What the built-in analysis reads from a call: a summary a person would write, and whether the caller was helped. */
export interface CallReading {
  summary: string;
  /** True when the caller's requests were answered, false when none was or the caller said nothing, null when they asked nothing. */
  successful: boolean | null;
}

/** At most this many exchanges are told; the rest are counted. */
const EXCHANGES_TOLD = 3;

const FILLER = /^(?:(?:oh|um+|uh+|er+|erm|ah|hmm+|well|so|and|(?:hi|hello|hey|hiya)(?: there)?|okay|ok|right|yeah|good (?:morning|afternoon|evening))\b[\s,.!?…-]*)+/iu;
const FAREWELL = /\b(?:bye|goodbye|good bye|see you|have a (?:nice|good|great) day|that'?s all|that is all)\b/u;
const THANKS = /\b(?:thanks|thank you|cheers)\b/u;
const YES = /^(?:yes|yeah|yep|yup|sure|of course|absolutely|definitely|certainly|correct|that works|sounds good|please do|okay|ok)\b/u;
const NO = /^(?:no|nope|nah|not really|not now|no thanks)\b/u;
/** An agent's question that yes or no answers ("Would you like…?", "Is Tuesday fine?"), not "How can I help?". */
const YES_NO_QUESTION = /^(?:do|does|did|would|will|can|could|shall|should|may|is|are|was|were|have|has)\b[^?]*\?$/iu;
/** The agent saying it could not help: a fallback, not an answer. */
const UNABLE =
  /\b(?:(?:don'?t|do not) (?:have an answer|know|understand)|didn'?t (?:catch|understand|get) that|not sure|only know|can(?:no|')?t (?:help|answer)|could you (?:repeat|say that again|rephrase)|unable to|no answer)\b/u;
const WH = "how much|how many|how long|what time|how|what|when|where|why|who|which";
const AUX = "do|does|did|can|could|will|would|should|is|are|was|were";
/** Where a run-on transcript ("how much does it cost what are your prices") starts its next question. */
const NEXT_QUESTION = new RegExp(`\\s(?=(?:what|how|when|where|why|who|which)\\s(?:much|many|long|time|${AUX})\\b)`, "u");

/** The caller's words in a report about them: they are the third person, and so is the business they called. */
const CALLER_PRONOUNS: Record<string, string> = {
  i: "they", "i'm": "they're", "i'd": "they'd", "i'll": "they'll", "i've": "they've", me: "them", my: "their", mine: "theirs", myself: "themselves",
  we: "they", "we're": "they're", our: "their", us: "them",
  you: "they", "you're": "they're", your: "the", yours: "theirs",
};
/** The agent's words reported: "we" is the business, "you" the caller. */
const AGENT_PRONOUNS: Record<string, string> = {
  we: "they", "we're": "they're", "we've": "they've", "we'll": "they'll", "we'd": "they'd", our: "their", ours: "theirs", us: "them",
  you: "the caller", "you're": "the caller is", "you've": "the caller has", "you'll": "the caller will", "you'd": "the caller would", your: "the caller's",
  yours: "the caller's", yourself: "themselves",
};
/** Sentences the agent says in its own voice, which read wrongly reported: quoted instead. */
const FIRST_PERSON = /\b(?:i|i'm|i'll|i've|i'd|me|my|mine)\b/u;
const IMPERATIVE = /^(?:tell|ask|try|please|call|visit|go|let|give|send|check|book|choose|pick|come|say|hold|wait)\b/u;
/** How a reported sentence may begin in lower case: its first word is no name. */
const LOWERCASE_START = /^(?:we|we're|we've|we'll|our|it|it's|its|the|a|an|there|there's|this|that|these|those|your|you|you're|they|they're|their|yes|no|sure)\b/iu;
const GREETING_SENTENCE = /^(?:hello|hi|hey|welcome|good (?:morning|afternoon|evening))\b[^.!?]{0,40}[.!?]?$/iu;

function swap(text: string, pronouns: Record<string, string>): string {
  return text.replace(/\b[\p{L}']+\b/gu, (word) => pronouns[word.toLowerCase()] ?? word);
}

function plain(text: string): string {
  return text.toLowerCase().replace(/[’]/gu, "'").replace(/[.!?…]+$/u, "").trim();
}

/** "cost" → "costs", "have" → "has": the verb after "does" in a reported question. */
function thirdPerson(verb: string): string {
  if (verb === "have") return "has";
  if (/(?:s|sh|ch|x|z|o)$/u.test(verb)) return `${verb}es`;
  if (/[^aeiou]y$/u.test(verb)) return `${verb.slice(0, -1)}ies`;
  return `${verb}s`;
}

/**
 * A caller's question or request as reported speech, "asked about the opening hours", "asked how much it costs",
 * "wanted to book an appointment"; undefined when it has none of the usual shapes (then it is quoted).
 */
function reportRequest(clause: string): string | undefined {
  const report = requestShape(plain(clause));
  return report === undefined ? undefined : withCaseOf(report, clause);
}

function requestShape(text: string): string | undefined {
  const want = /^(?:i'd like|i would like|i want|i need|i'm looking for|i am looking for|i'm calling|i am calling|can i|could i|may i)\s+(?:to\s+)?(.+)$/u.exec(text);
  if (want?.[1]) {
    const verbFirst = /^(?:book|make|get|have|know|ask|order|cancel|change|speak|talk|reschedule|find|check|pay|buy|see|come)\b/u.test(want[1]);
    return verbFirst ? `wanted to ${swap(want[1], CALLER_PRONOUNS)}` : `wanted ${swap(want[1], CALLER_PRONOUNS)}`;
  }
  const about = /^(?:what|which)\s+(?:is|are|were|was|'s)\s+(?:your|the|my|our)\s+(.+)$/u.exec(text) ?? /^what's\s+(?:your|the|my|our)\s+(.+)$/u.exec(text);
  if (about?.[1]) return `asked about the ${swap(about[1], CALLER_PRONOUNS)}`;
  const wh = new RegExp(`^(${WH})\\s+(${AUX})\\s+(i|you|we|it|they|he|she|there|the \\S+|my \\S+|your \\S+)\\s+(.+)$`, "u").exec(text);
  if (wh?.[1] && wh[2] && wh[3] && wh[4]) {
    const [, question, aux, subject, rest] = wh;
    if ((subject === "i" || subject === "we") && ["do", "can", "should", "could"].includes(aux)) return `asked ${question} to ${swap(rest, CALLER_PRONOUNS)}`;
    const who = swap(subject, CALLER_PRONOUNS);
    const [verb = "", ...others] = rest.split(/\s+/u);
    const thirdSingular = aux === "does" && !["they", "i", "we", "you"].includes(subject);
    const predicate = aux === "do" || aux === "does" ? [thirdSingular ? thirdPerson(verb) : verb, ...others].join(" ") : `${aux} ${rest}`;
    return `asked ${question} ${who} ${swap(predicate, CALLER_PRONOUNS)}`;
  }
  const yesNo = new RegExp(`^(${AUX})\\s+(i|you|we|it|they|there|the \\S+)\\s+(.+)$`, "u").exec(text);
  if (yesNo?.[1] && yesNo[2] && yesNo[3]) {
    const [, aux, subject, rest] = yesNo;
    const verb = aux === "do" ? "" : aux === "does" ? "" : `${aux} `;
    const [first = "", ...others] = rest.split(/\s+/u);
    const predicate = aux === "does" ? [thirdPerson(first), ...others].join(" ") : `${verb}${rest}`;
    return `asked whether ${swap(subject, CALLER_PRONOUNS)} ${swap(predicate, CALLER_PRONOUNS)}`;
  }
  return undefined;
}

/** A report keeps the caller's own capitals ("Tuesday", "Ada"), which matching lowered. */
function withCaseOf(report: string, clause: string): string {
  const original = new Map<string, string>();
  for (const [index, word] of (clause.match(/[\p{L}\p{N}']+/gu) ?? []).entries()) {
    if (index > 0 && word !== "I" && /\p{Lu}/u.test(word)) original.set(word.toLowerCase(), word);
  }
  return report.replace(/[\p{L}\p{N}']+/gu, (word) => original.get(word) ?? word);
}

function isQuestion(clause: string): boolean {
  return clause.trim().endsWith("?") || new RegExp(`^(?:${WH}|${AUX})\\b`, "u").test(plain(clause));
}

/** The agent's sentence in a report: "the agent said they are open…", or quoted when it speaks as "I" or commands. */
function reportAnswer(sentence: string): string {
  const text = sentence.trim().replace(/^(?:sure|of course|certainly|great|okay|ok|yes|absolutely|done|perfect|all right|alright)[,!.:]\s+/iu, "");
  if (FIRST_PERSON.test(text.toLowerCase()) || IMPERATIVE.test(text.toLowerCase()) || text.endsWith("?")) return `the agent said: "${closeSentence(text)}"`;
  const reported = swap(text, AGENT_PRONOUNS);
  const opening = LOWERCASE_START.test(text) ? reported.charAt(0).toLowerCase() + reported.slice(1) : reported;
  return `the agent said ${closeSentence(opening)}`;
}

/** The sentence of the agent's turn that answers the caller: the one sharing most words with what they said. */
function answeringSentence(agentTurn: string, said: string): string | undefined {
  const asked = new Set(tokenize(said));
  const sentences = splitSentences(agentTurn).filter((sentence) => !GREETING_SENTENCE.test(sentence.trim()));
  let best: { sentence: string; score: number } | undefined;
  for (const sentence of sentences) {
    const score = tokenize(sentence).filter((token) => asked.has(token)).length - (sentence.trim().endsWith("?") ? 0.5 : 0);
    if (!best || score > best.score) best = { sentence, score };
  }
  return best?.sentence;
}

interface Turn {
  role: TranscriptLine["role"];
  content: string;
}

function turnsOf(transcript: readonly TranscriptLine[]): Turn[] {
  const turns: Turn[] = [];
  for (const line of transcript) {
    const content = line.content.trim();
    if (content === "") continue;
    const last = turns.at(-1);
    if (last?.role === line.role) last.content = `${last.content} ${content}`;
    else turns.push({ role: line.role, content });
  }
  return turns;
}

/** A user turn without its fillers and greetings, cut into clauses: its sentences, and the questions of a run-on. */
function clausesOf(content: string): string[] {
  return splitSentences(content)
    .flatMap((sentence) => sentence.split(NEXT_QUESTION))
    .map((clause) => clause.trim().replace(FILLER, "").trim())
    .filter((clause) => /[\p{L}\p{N}]/u.test(clause));
}

type Exchange =
  | { kind: "answered"; request: string; answer: string }
  | { kind: "not_understood"; said: string }
  | { kind: "not_answered"; request: string }
  /** The call ended before the agent answered. */
  | { kind: "cut_off"; request: string }
  | { kind: "agreed" | "declined"; question: string; answer?: string };

/**
 * The built-in reading of a call: each thing the caller asked or wanted, with what the agent answered (reported, or
 * quoted when the agent spoke as "I"); a reply that is the agent's fallback says the agent did not understand; an
 * agent's question answered yes or no; and how the call ended. A call where nothing was heard from the caller, or
 * nothing the agent understood, says so plainly.
 */
export function readCall(transcript: readonly TranscriptLine[]): CallReading {
  const turns = turnsOf(transcript);
  if (!turns.some((turn) => turn.role === "user")) {
    const agent = turns.find((turn) => turn.role === "agent");
    const opening = agent && agent.content.length > 160 ? (splitSentences(agent.content)[0] ?? agent.content) : agent?.content;
    const spoke = opening ? ` The agent said: "${closeSentence(opening)}"` : "";
    return { summary: `The caller did not say anything that could be heard.${spoke}`, successful: false };
  }
  const exchanges: Exchange[] = [];
  let farewell = false;
  let thanked = false;
  for (const [index, turn] of turns.entries()) {
    if (turn.role !== "user") continue;
    farewell ||= FAREWELL.test(plain(turn.content));
    thanked ||= THANKS.test(plain(turn.content));
    const exchange = exchangeOf(turn.content, turns[index - 1], turns[index + 1]);
    if (exchange) exchanges.push(exchange);
  }
  if (exchanges.length > 0 && exchanges.every((exchange) => exchange.kind === "not_understood")) {
    const heard = turns.filter((turn) => turn.role === "user").map((turn) => `"${plain(turn.content)}"`);
    const list = heard.length > 1 ? `${heard.slice(0, -1).join(", ")} and ${heard.at(-1) ?? ""}` : (heard[0] ?? "");
    return { summary: `The agent could not understand the caller, who was heard saying only ${list}.`, successful: false };
  }
  const sentences = exchanges.slice(0, EXCHANGES_TOLD).map(tellExchange);
  if (exchanges.length > EXCHANGES_TOLD) {
    const more = exchanges.length - EXCHANGES_TOLD;
    sentences.push(`${more === 1 ? "One more exchange followed" : `${more} more exchanges followed`}.`);
  }
  if (farewell || thanked) sentences.push(`The caller ${thanked ? (farewell ? "thanked the agent and said goodbye" : "thanked the agent") : "said goodbye"}.`);
  if (sentences.length === 0) sentences.push("The caller only exchanged greetings with the agent.");
  return { summary: sentences.join(" "), successful: successOf(exchanges) };
}

/** What one caller turn did, between the agent's turn before it and the one after; undefined for greetings and goodbyes. */
function exchangeOf(content: string, previous: Turn | undefined, next: Turn | undefined): Exchange | undefined {
  const substantive = clausesOf(content).filter((clause) => !FAREWELL.test(plain(clause)) && !THANKS.test(plain(clause)));
  if (substantive.length === 0) return undefined;
  const first = plain(substantive[0] ?? "");
  const said = substantive.join(" ");
  const reply = next?.role === "agent" ? next.content : undefined;
  const unable = reply !== undefined && UNABLE.test(plain(reply));
  const question = previous?.role === "agent" ? splitSentences(previous.content).at(-1)?.trim() : undefined;
  if (!unable && question && YES_NO_QUESTION.test(question) && (YES.test(first) || NO.test(first))) {
    const answer = reply === undefined ? undefined : answeringSentence(reply, content);
    return { kind: YES.test(first) ? "agreed" : "declined", question, ...(answer ? { answer: reportAnswer(answer) } : {}) };
  }
  if (reply === undefined) {
    const request = substantive.map(reportRequest).find((report) => report !== undefined);
    return request ? { kind: "cut_off", request } : undefined;
  }
  if (unable) {
    // A question written out with its question mark was understood as words; a recognizer's unpunctuated guess may not be.
    const asked = substantive.find((clause) => clause.trim().endsWith("?"));
    const request = asked === undefined ? undefined : reportRequest(asked);
    return request ? { kind: "not_answered", request } : { kind: "not_understood", said };
  }
  const requests = substantive.flatMap((clause) => {
    const report = reportRequest(clause) ?? (isQuestion(clause) ? `asked "${closeSentence(clause)}"` : undefined);
    return report ? [report] : [];
  });
  const answer = answeringSentence(reply, said);
  return answer ? { kind: "answered", request: requests.length > 0 ? joinReports(requests) : `said "${said}"`, answer: reportAnswer(answer) } : undefined;
}

function joinReports(reports: readonly string[]): string {
  // "asked how much it costs and asked about the prices" reads better with the verb once.
  const [first = "", ...rest] = reports;
  return [first, ...rest.map((report) => (report.startsWith("asked ") && first.startsWith("asked ") ? report.slice("asked ".length) : report))].join(" and ");
}

function tellExchange(exchange: Exchange): string {
  switch (exchange.kind) {
    case "answered":
      return `The caller ${exchange.request}; ${exchange.answer}`;
    case "not_understood":
      return `The caller said "${exchange.said}", which the agent did not understand.`;
    case "not_answered":
      return `The caller ${exchange.request}, which the agent could not answer.`;
    case "cut_off":
      return `The caller ${exchange.request}, and the call ended before the agent answered.`;
    case "agreed":
    case "declined": {
      const reply = `The agent asked "${exchange.question.trim()}" and the caller said ${exchange.kind === "agreed" ? "yes" : "no"}`;
      return exchange.answer ? `${reply}; then ${exchange.answer}` : `${reply}.`;
    }
  }
}

/** Helped when the agent answered what was asked or had its question answered; not when it understood nothing. */
function successOf(exchanges: readonly Exchange[]): boolean | null {
  if (exchanges.length === 0) return null;
  if (exchanges.some((exchange) => exchange.kind === "answered" || exchange.kind === "agreed")) return true;
  return exchanges.some((exchange) => exchange.kind !== "declined") ? false : null;
}

import { Bm25Index } from "../shared/text/bm25.js";
import { wordChunks } from "../shared/text/sentences.js";
import { tokenize } from "../shared/text/tokens.js";
import type { SimulatedUser, UserTurn } from "./persona.js";
import type { Persona, SimulationTurn } from "./simulation.js";
import { isNonAnswer, nearDuplicate } from "./text-signals.js";

type Trait = "impatient" | "polite" | "confused" | "frustrated" | "skeptical" | "terse";

/** The behaviours the built-in persona recognises in `behavioural_prompt`, by the words that name them. */
const TRAIT_WORDS: Record<Trait, RegExp> = {
  impatient: /\b(?:impatient|hurry|hurried|rush|rushed|busy|short on time|quick)/u,
  polite: /\b(?:polite|friendly|kind|courteous|warm|pleasant)/u,
  confused: /\b(?:confus|unsure|elderly|not tech|non-technical|beginner|new to)/u,
  frustrated: /\b(?:frustrat|angry|upset|annoyed|rude|irritat)/u,
  skeptical: /\b(?:skeptic|sceptic|doubt|suspicious|distrust)/u,
  terse: /\b(?:terse|brief|short answers|few words|concise|blunt)/u,
};

/** 32-bit FNV-1a: the persona's fields choose its wording, so one persona always says the same thing. */
function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

function lowerFirst(text: string): string {
  return text.length > 1 && /^[A-Z][a-z]/u.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text;
}

function question(text: string): string {
  const trimmed = text.trim().replace(/[.!]+$/u, "");
  return trimmed.endsWith("?") ? trimmed : `${trimmed}?`;
}

/** Share of `candidate`'s words that `said` already holds: 1 when everything it would ask was asked before. */
function coveredShare(candidate: string, said: ReadonlySet<string>): number {
  const words = new Set(tokenize(candidate));
  if (words.size === 0) return 1;
  let covered = 0;
  for (const word of words) if (said.has(word)) covered++;
  return covered / words.size;
}

/**
 * The simulated user when no model plays it: deterministic, so tests and offline demos replay exactly, and varied, so
 * the conversation goes somewhere. Its questions are the project's knowledge questions that relate most to the
 * persona's topic, industry and agent type (what this business's customers ask, ranked by BM25), then questions about
 * the topic built from templates; it never asks what it already asked. It reacts to each reply: thanks for an answer,
 * a complaint and a new question for a non-answer or a repeated reply, and it gives up (ending the conversation) after
 * two unhelpful replies in a row (one when impatient or frustrated). With nothing left to ask it says goodbye and
 * ends. Traits named in `behavioural_prompt` (impatient, polite, confused, frustrated, skeptical, terse) colour its
 * wording, and its fields pick among phrasings.
 */
export class BuiltinSimulatedUser implements SimulatedUser {
  private readonly traits: Set<Trait>;
  private readonly seed: number;
  private readonly questions: string[];

  constructor(
    private readonly persona: Persona,
    knowledgeQuestions: readonly string[],
  ) {
    const behaviour = (persona.behaviouralPrompt ?? "").toLowerCase();
    this.traits = new Set((Object.keys(TRAIT_WORDS) as Trait[]).filter((trait) => TRAIT_WORDS[trait].test(behaviour)));
    this.seed = seedOf(JSON.stringify([persona.agentType, persona.industry, persona.topic, persona.behaviouralPrompt]));
    this.questions = [...rankedKnowledge(persona, knowledgeQuestions), ...topicQuestions(persona)].map(question);
  }

  async next(turns: readonly SimulationTurn[], _remaining: number, onToken?: (token: string) => void): Promise<UserTurn> {
    const turn = this.compose(turns);
    if (onToken) for (const chunk of wordChunks(turn.message)) onToken(chunk);
    return turn;
  }

  private compose(turns: readonly SimulationTurn[]): UserTurn {
    const userTurns = turns.filter((turn) => turn.role === "user").map((turn) => turn.message);
    const agentTurns = turns.filter((turn) => turn.role === "assistant").map((turn) => turn.message);
    const position = userTurns.length;
    const streak = unhelpfulStreak(agentTurns);
    const patience = this.has("impatient") || this.has("frustrated") ? 1 : 2;
    if (streak >= patience) return { message: this.pick(this.giveUps(), position), ended: true };

    // A reply that asks back ("How can I help?") is neither thanked nor questioned: the user just says what they want.
    const lastReply = agentTurns.at(-1);
    const askedBack = lastReply !== undefined && lastReply.trim().endsWith("?");
    const lastAnswered = lastReply !== undefined && streak === 0 && !askedBack;
    const challenge = lastAnswered ? this.challenge(userTurns) : undefined;
    if (challenge) return { message: challenge, ended: false };

    const said = new Set(userTurns.flatMap((text) => tokenize(text)));
    const next = this.questions.find((candidate) => coveredShare(candidate, said) < 0.5);
    if (!next) return { message: this.pick(this.closings(), position), ended: true };
    const reaction = streak > 0 ? this.pick(this.complaints(), position) : lastAnswered ? this.pick(this.thanks(), position) : "";
    const asked = this.pick(this.framings(), position + userTurns.length).replace("{q}", next).replace("{lq}", lowerFirst(next));
    return { message: reaction === "" ? asked : `${reaction} ${asked}`, ended: false };
  }

  private has(trait: Trait): boolean {
    return this.traits.has(trait);
  }

  private pick(options: readonly string[], position: number): string {
    return options[(this.seed + position * 7) % options.length]!;
  }

  /** A skeptical or confused persona questions the first answer it gets, once, instead of moving on. */
  private challenge(userTurns: readonly string[]): string | undefined {
    const line = this.has("skeptical")
      ? "Are you sure about that? How do you know?"
      : this.has("confused")
        ? "Sorry, I'm a bit confused. Could you explain that more simply?"
        : undefined;
    return line && !userTurns.includes(line) ? line : undefined;
  }

  private thanks(): string[] {
    if (this.has("terse") || this.has("impatient")) return ["OK.", "Fine.", "Got it."];
    if (this.has("frustrated")) return ["Finally, an answer.", "OK, at least that's clear."];
    if (this.has("skeptical")) return ["Hm, alright.", "Okay, if you say so."];
    if (this.has("confused")) return ["Okay, I think I follow.", "Alright, thanks for explaining."];
    if (this.has("polite")) return ["Thank you, that's very helpful!", "Wonderful, thank you so much.", "Great, thanks for explaining."];
    return ["Thanks, that helps.", "Good to know.", "Okay, great."];
  }

  private complaints(): string[] {
    if (this.has("frustrated")) return ["That's not helpful at all.", "You're not answering my question."];
    if (this.has("polite")) return ["Hmm, I'm not sure that answers my question, but never mind.", "Thanks, though that's not quite what I asked."];
    return ["That doesn't really answer my question.", "Hmm, that's not what I asked.", "I'm not sure that helps."];
  }

  private framings(): string[] {
    if (this.has("terse")) return ["{q}"];
    if (this.has("impatient")) return ["Quickly: {lq}", "{q}", "Just tell me: {lq}"];
    if (this.has("confused")) return ["I'm not sure how this works. {q}", "{q}", "Sorry if this is a silly question: {lq}"];
    return ["{q}", "Also, {lq}", "One more thing: {lq}", "I'd also like to know: {lq}"];
  }

  private closings(): string[] {
    const topic = this.persona.topic;
    if (this.has("terse") || this.has("impatient")) return ["That's all. Bye."];
    if (this.has("polite")) {
      return [`That's everything I needed${topic ? ` about ${topic}` : ""}. Thank you so much for your help, goodbye!`];
    }
    return [`That's all I needed${topic ? ` about ${topic}` : ""}, thanks. Bye!`, "Great, that covers everything. Goodbye!"];
  }

  private giveUps(): string[] {
    if (this.has("frustrated")) return ["This isn't going anywhere. I'll call someone instead. Bye."];
    if (this.has("impatient")) return ["I don't have time for this. Bye."];
    return ["I don't think you can help me with this. I'll try another way. Goodbye."];
  }
}

/** The knowledge questions, those closest to the persona first (BM25 against its topic, industry and agent type). */
function rankedKnowledge(persona: Persona, knowledgeQuestions: readonly string[]): string[] {
  const query = tokenize([persona.topic, persona.industry, persona.agentType].filter(Boolean).join(" "));
  const ranked = new Bm25Index(knowledgeQuestions.map((text) => tokenize(text))).rank(query).map((match) => match.index);
  const order = [...ranked, ...knowledgeQuestions.keys()];
  return [...new Set(order)].map((index) => knowledgeQuestions[index]!).filter((text) => text.trim() !== "");
}

function topicQuestions(persona: Persona): string[] {
  const subject = persona.topic ?? (persona.industry ? `your ${persona.industry} services` : "your services");
  return [
    `Can you tell me more about ${subject}`,
    `What would the next step be for ${subject}`,
    `Is there any cost involved with ${subject}`,
    `How long does it usually take to sort out ${subject}`,
    `Who should I contact if I have a problem with ${subject}`,
  ];
}

/** How many of the agent's latest replies in a row were unhelpful: empty, a non-answer, or a repeat of an earlier one. */
function unhelpfulStreak(agentTurns: readonly string[]): number {
  let streak = 0;
  for (let index = agentTurns.length - 1; index >= 0; index--) {
    const reply = agentTurns[index]!;
    const repeated = agentTurns.slice(0, index).some((earlier) => nearDuplicate(earlier, reply));
    if (!(reply.trim() === "" || isNonAnswer(reply) || repeated)) break;
    streak++;
  }
  return streak;
}

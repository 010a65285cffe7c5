import type { LlmProvider, PromptMessage } from "../../providers/llm/types.js";
import { generateText } from "../chat/generation.js";
import { END_MARKER, type Persona, type SimulationTurn } from "./simulation.js";

/** What a simulated user says next; `ended` when it closes the conversation (`message` may then be empty). */
export interface UserTurn {
  message: string;
  ended: boolean;
}

/** Plays the user's side of a simulated conversation. */
export interface SimulatedUser {
  /** The next user turn after `turns`, `remaining` user turns being left (this one included). */
  next(turns: readonly SimulationTurn[], remaining: number, onToken?: (token: string) => void): Promise<UserTurn>;
}

/** The persona as instructions for a model playing the user. */
export function personaInstructions(persona: Persona, remaining: number): string {
  const lines = [
    "You are role-playing a human user in a conversation with an AI agent, to test that agent.",
    "Stay in character: never say that you are an AI, a simulation or a test.",
  ];
  if (persona.agentType) lines.push(`The agent you are talking to is a ${persona.agentType}.`);
  if (persona.industry) lines.push(`The business is in this industry: ${persona.industry}.`);
  if (persona.topic) lines.push(`What you want from this conversation: ${persona.topic}.`);
  if (persona.behaviouralPrompt) lines.push(`How you behave: ${persona.behaviouralPrompt}`);
  lines.push(
    "Write only your own next message to the agent, in plain text, as the user would type it: no role names, no quotes.",
    "Pursue what you came for. Ask a follow-up when an answer is unclear; never repeat a question the agent has already answered.",
    `When you have what you came for, or the conversation has nothing left for you, end your message with ${END_MARKER} ` +
      `(a short closing message then ${END_MARKER}, or ${END_MARKER} alone).`,
    remaining <= 1
      ? `This is your last message: close the conversation and end it with ${END_MARKER}.`
      : `You have at most ${remaining} messages left, this one included.`,
  );
  return lines.join("\n");
}

/**
 * The prompt of a model playing the user: the persona, then the conversation seen from the user's side, the agent's
 * turns as the other party's ("user") and the simulated user's own as its replies ("assistant").
 */
export function simulatedUserPrompt(persona: Persona, turns: readonly SimulationTurn[], remaining: number): PromptMessage[] {
  return [
    { role: "system", content: personaInstructions(persona, remaining) },
    ...turns.map((turn): PromptMessage => ({ role: turn.role === "assistant" ? "user" : "assistant", content: turn.message })),
  ];
}

/**
 * Passes a model's streamed text on without the end marker: text that could be the start of the marker, and
 * whitespace that may precede it, is held back until what follows shows what it is. Leading and trailing whitespace
 * never goes out, so the tokens passed on join to exactly the trimmed message.
 */
export class EndMarkerFilter {
  private text = "";
  private sent = 0;
  private markerSeen = false;

  constructor(private readonly onToken?: (token: string) => void) {}

  push(delta: string): void {
    if (this.markerSeen) return;
    this.text += delta;
    const at = this.text.indexOf(END_MARKER);
    if (at !== -1) {
      this.text = this.text.slice(0, at);
      this.markerSeen = true;
    }
    this.release(this.safeEnd());
  }

  /** The whole message, trimmed, and whether the marker ended it; sends what was held back. */
  finish(): UserTurn {
    const message = this.text.trim();
    this.release(this.text.trimEnd().length);
    return { message, ended: this.markerSeen };
  }

  /** How far the text can go out: not into a possible start of the marker, nor into trailing whitespace. */
  private safeEnd(): number {
    let end = this.text.length;
    if (!this.markerSeen) {
      for (let length = Math.min(END_MARKER.length - 1, end); length > 0; length--) {
        if (END_MARKER.startsWith(this.text.slice(end - length))) {
          end -= length;
          break;
        }
      }
    }
    while (end > 0 && /\s/u.test(this.text[end - 1]!)) end--;
    return end;
  }

  private release(end: number): void {
    let start = this.sent;
    if (start === 0) {
      while (start < end && /\s/u.test(this.text[start]!)) start++;
    }
    if (end > start) {
      this.onToken?.(this.text.slice(start, end));
      this.sent = end;
    } else if (start > this.sent && start <= end) {
      this.sent = start;
    }
  }
}

/** The simulated user played by a model (the project's, or `simulation.provider`'s), prompted as the persona. */
export class ModelSimulatedUser implements SimulatedUser {
  constructor(
    private readonly provider: LlmProvider,
    private readonly persona: Persona,
  ) {}

  async next(turns: readonly SimulationTurn[], remaining: number, onToken?: (token: string) => void): Promise<UserTurn> {
    const filter = new EndMarkerFilter(onToken);
    await generateText(this.provider, simulatedUserPrompt(this.persona, turns, remaining), "reply", (delta) => filter.push(delta));
    const turn = filter.finish();
    // A model that writes nothing has nothing more to say: that ends the conversation too.
    return turn.message === "" ? { message: "", ended: true } : turn;
  }
}

import type { Speaker } from "./ports.js";

/** The history calls the agent's turns `assistant` messages; transcripts label them `Agent`. */
type MessageRole = "assistant" | "user";

export function roleOfSpeaker(speaker: Speaker): MessageRole {
  return speaker === "agent" ? "assistant" : "user";
}

export function speakerOfRole(role: string): Speaker {
  return role === "assistant" ? "agent" : "user";
}

/** A transcript line's label: `Agent: …` / `User: …`. */
export function speakerLabel(speaker: Speaker): string {
  return speaker === "agent" ? "Agent" : "User";
}

import { normalize, tokenize } from "../shared/text/tokens.js";

/**
 * Signals read from plain text, shared by the built-in persona (to react like a user) and the heuristic judge (to
 * score like a reviewer). Word-level, English, and deliberately simple: the judge says "heuristic" for a reason.
 */

const NON_ANSWER =
  /\b(?:sorry|apologi[sz]e|i (?:do not|don['’]t|cannot|can['’]t) (?:know|help|answer|say|find)|not sure|no (?:answer|information|idea)|unable to (?:help|answer))\b/u;

/** A reply that declines or fails to answer ("Sorry, I don't have an answer to that yet."). */
export function isNonAnswer(reply: string, fallback?: string): boolean {
  const text = normalize(reply).trim();
  if (fallback !== undefined && fallback.trim() !== "" && text === normalize(fallback).trim()) return true;
  return NON_ANSWER.test(text);
}

function wordSet(text: string): Set<string> {
  return new Set(tokenize(text));
}

/** Jaccard similarity of the two texts' word sets (stemmed, common words left out); 1 for two texts without words. */
export function similarity(a: string, b: string): number {
  const left = wordSet(a);
  const right = wordSet(b);
  if (left.size === 0 && right.size === 0) return normalize(a).trim() === normalize(b).trim() ? 1 : 0;
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  return shared / (left.size + right.size - shared);
}

/** The same reply again, give or take a few words. */
export function nearDuplicate(a: string, b: string): boolean {
  return similarity(a, b) >= 0.8;
}

/** The words two texts share (stemmed). */
export function sharedWords(a: string, b: string): string[] {
  const right = wordSet(b);
  return [...wordSet(a)].filter((word) => right.has(word));
}

const FAREWELL = /\b(?:good ?bye|bye|farewell|take care|have a (?:great|good|nice|wonderful|lovely) (?:day|evening|weekend|one))\b/u;

/** A reply that closes the conversation: a farewell with no question left open. */
export function isFarewell(reply: string): boolean {
  const text = normalize(reply);
  return FAREWELL.test(text) && !text.includes("?");
}

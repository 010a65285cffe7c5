/**
 * Spellings of one spoken word that the recognizer's dictionary holds side by side ("dr" is pronounced "doctor" there,
 * "good bye" is two of its words): each is scored as its spelled-out form, so that WER counts mishearings, not spelling.
 */
const SAME_WORD: Record<string, string> = { dr: "doctor", mr: "mister", mrs: "missus", ok: "okay" };
const SAME_WORDS: [RegExp, string][] = [[/\bgood +bye\b/g, "goodbye"]];

/** Lower case words, without punctuation, in one spelling: how a recognizer's hypothesis and a reference are compared. */
export function words(text: string): string[] {
  let spoken = text.toLowerCase().replace(/[^a-z0-9' ]+/g, " ");
  for (const [spelling, word] of SAME_WORDS) spoken = spoken.replace(spelling, word);
  return spoken
    .split(/\s+/)
    .filter((word) => word !== "")
    .map((word) => SAME_WORD[word] ?? word);
}

/** The word-level edit distance (substitutions, insertions, deletions) between a reference and a hypothesis. */
export function wordEdits(reference: string, hypothesis: string): { edits: number; words: number } {
  const expected = words(reference);
  const heard = words(hypothesis);
  let previous = Array.from({ length: heard.length + 1 }, (_, index) => index);
  for (let i = 1; i <= expected.length; i++) {
    const current = [i];
    for (let j = 1; j <= heard.length; j++) {
      const substitution = previous[j - 1]! + (expected[i - 1] === heard[j - 1] ? 0 : 1);
      current.push(Math.min(substitution, previous[j]! + 1, current[j - 1]! + 1));
    }
    previous = current;
  }
  return { edits: previous[heard.length]!, words: expected.length };
}

/** Word error rate over a set of utterances: all edits over all reference words. */
export function wordErrorRate(pairs: { reference: string; hypothesis: string }[]): number {
  let edits = 0;
  let total = 0;
  for (const pair of pairs) {
    const result = wordEdits(pair.reference, pair.hypothesis);
    edits += result.edits;
    total += result.words;
  }
  return total === 0 ? 0 : edits / total;
}

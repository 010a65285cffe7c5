/**
 * What the listening side of a call knows of language: which words are worth favouring in the recognizer, and
 * whether the words heard so far read as a finished sentence (which lets a turn end after a shorter silence).
 */

/** Words that carry little: favouring them would only tilt the recognizer toward filler. */
const FUNCTION_WORDS = new Set(
  ("a an the and or but if then so of to in on at by for with from into about as is are was were be been am do does did " +
    "have has had i you he she it we they me him her us them my your his its our their this that these those what which " +
    "who whom whose when where why how can could will would shall should may might must not no yes hi hello please thanks " +
    "thank there here just also very").split(" "),
);

/** The content words of a text, lower case and unique, in order: names, products, places, numbers spoken as words. */
export function spokenWords(text: string): string[] {
  const words = text.toLowerCase().split(/[^a-z']+/).filter((word) => word.length >= 3 && !FUNCTION_WORDS.has(word));
  return [...new Set(words)];
}

/**
 * The phrases a call's recognizer favours: the project's `stt.keywords` as they are, then the content words of its
 * knowledge entries, its greeting and the thread's context values (decisions.md, Speech). Bounded, keywords first.
 */
export function callPhrases(keywords: readonly string[], texts: readonly string[], limit = 300): string[] {
  const phrases = [...keywords];
  const seen = new Set(keywords.map((keyword) => keyword.toLowerCase()));
  for (const text of texts) {
    for (const word of spokenWords(text)) {
      if (phrases.length >= limit) return phrases;
      if (!seen.has(word)) {
        seen.add(word);
        phrases.push(word);
      }
    }
  }
  return phrases;
}

/** Words after which a speaker is rarely done: an article, a preposition, a conjunction, an auxiliary, a verb waiting for its object, a hesitation. */
const UNFINISHED_ENDINGS = new Set(
  ("a an the and or but because so if than that which who to of in on at by for with from into about as is are was were " +
    "am be been being do does did has have had my your our their his her its i we you they he she it would could should " +
    "will can may might must want need like um uh er then also just maybe oh ah eh hmm mm well").split(" "),
);

/** What a caller says in a word or two and means as a whole turn. */
const SHORT_ANSWERS = new Set("yes no yeah yep nope sure okay ok bye goodbye thanks thank you correct right exactly please fine great".split(" "));

/**
 * Whether the words heard so far read as a complete sentence: at least three words that do not end on one that needs
 * more (`I would like to…`, `how long does…`) or on a hesitation, or a short answer (`yes`, `no thanks`, `bye`). Two
 * words are rarely a sentence, and the recognizer's partial words lag behind the last one spoken, so a shorter run is
 * left to the longer silence.
 */
export function readsComplete(heard: string): boolean {
  const words = heard.toLowerCase().split(/\s+/).filter((word) => word !== "" && !/^[<[(]/.test(word));
  const last = words.at(-1);
  if (last === undefined) return false;
  if (words.every((word) => SHORT_ANSWERS.has(word))) return true;
  return words.length >= 3 && !UNFINISHED_ENDINGS.has(last);
}

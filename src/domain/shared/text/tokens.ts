/**
 * Text normalization for the built-in agent and for what the domain reads in text offline (call summaries and
 * analysis, simulated personas and their judge): fold case and accents, split on anything that is not a letter or
 * digit, drop common English words (and the greetings and thanks of chat), and reduce each word with a light suffix
 * stemmer.
 */

const STOP_WORDS = new Set(
  (
    "a about after all also am an and any are as at be been before being but by can could did do does doing for from " +
    "had has have having he her here hers him his how i if in into is it its just me my no nor not of off on or our " +
    "ours out over she should so some such than that the their theirs them then there these they this those to too " +
    "under until up us very was we were what when where which while who whom why will with would you your yours " +
    "hi hello hey please thanks thank ok okay " +
    // What splitting on the apostrophe leaves of contractions: "I'm", "don't", "we'll", "you've", "hasn't", "it's".
    "m t ll ve d s re don doesn didn isn aren wasn weren hasn haven hadn won wouldn couldn shouldn"
  ).split(" "),
);

const VOWEL = /[aeiouy]/;

/** "shipp" → "ship", "runn" → "run"; l, s and z stay doubled as in "call", "miss", "buzz". */
function undouble(stem: string): string {
  const last = stem.at(-1);
  return last !== undefined && last === stem.at(-2) && !VOWEL.test(last) && !"lsz".includes(last) ? stem.slice(0, -1) : stem;
}

/**
 * A deliberately light stemmer: plural -s/-es/-ies, then -ing/-ed when a vowel is left in the stem, then a final -e.
 * It only has to map a word and its common variants to one key ("opening", "opened", "opens" → "open";
 * "prices", "priced" → "pric"); the keys never leave this module.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let stemmed = word;
  if (stemmed.endsWith("ies") && stemmed.length > 4) stemmed = `${stemmed.slice(0, -3)}y`;
  else if (stemmed.endsWith("sses")) stemmed = stemmed.slice(0, -2);
  else if (stemmed.endsWith("s") && !/(?:ss|us|is)$/.test(stemmed)) stemmed = stemmed.slice(0, -1);
  for (const suffix of ["ing", "ed"]) {
    const base = stemmed.slice(0, -suffix.length);
    if (stemmed.endsWith(suffix) && base.length >= 3 && VOWEL.test(base)) {
      stemmed = undouble(base);
      break;
    }
  }
  if (stemmed.endsWith("e") && stemmed.length > 3) stemmed = stemmed.slice(0, -1);
  return stemmed;
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** Lowercase, compatibility-decomposed, with combining marks removed: "Café" and "CAFE" both become "cafe". */
export function normalize(text: string): string {
  // ASCII text has nothing to decompose and no marks, and Unicode normalization is most of the cost of a question.
  if (ASCII_ONLY.test(text)) return text.toLowerCase();
  return text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
}

export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  // In ASCII text the letters and digits are a-z and 0-9 once lower-cased: a plain class splits it faster.
  const words = ASCII_ONLY.test(text) ? text.toLowerCase().split(/[^a-z0-9]+/) : normalize(text).split(/[^\p{L}\p{N}]+/u);
  for (const word of words) {
    if (word !== "" && !STOP_WORDS.has(word)) tokens.push(stem(word));
  }
  return tokens;
}

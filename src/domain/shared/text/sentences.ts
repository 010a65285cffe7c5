/** Sentence ends (., !, ?, … followed by space) and line breaks; no abbreviation handling, which a summary can live without. */
export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?…])\s+|\n+/u)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== "");
}

/** Ends a sentence with a full stop unless it already ends with punctuation, so that joined sentences still read as sentences. */
export function closeSentence(sentence: string): string {
  return /[.!?…]["')\]]*$/u.test(sentence) ? sentence : `${sentence}.`;
}

/** Each word with the whitespace that follows it (leading whitespace rides with the first), so the pieces join back exactly. */
export function wordChunks(text: string): string[] {
  return text.match(/\s*\S+\s*/gu) ?? (text === "" ? [] : [text]);
}

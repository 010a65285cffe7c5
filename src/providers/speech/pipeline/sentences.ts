/**
 * Cuts a streamed reply into sentences as the tokens arrive, so that each can be spoken while the rest is still
 * being generated. A sentence ends at . ! ? or … followed by whitespace (not inside "9.30" or "e.g."'s first dot
 * followed by a letter), or at a newline; a very long run without one is cut at its last comma or space after
 * `maxChars`, so that speech never waits on a model that writes one endless sentence. The reply's first piece may
 * end sooner, at its first clause (a comma, colon or semicolon after a few words), so that the caller hears the
 * agent as early as possible.
 */
export class SentenceSplitter {
  private pending = "";
  private cutAny = false;

  constructor(
    private readonly maxChars = 200,
    private readonly firstClause = false,
  ) {}

  push(delta: string): string[] {
    this.pending += delta;
    const sentences: string[] = [];
    for (;;) {
      const match = /[.!?…]+["')\]]*\s+|\n+/u.exec(this.pending);
      let cut = match ? match.index + match[0].length : -1;
      if (this.firstClause && !this.cutAny) {
        const clause = /^(?:\S+\s+){2,}?\S*[,;:]\s+/u.exec(this.pending);
        if (clause && (cut < 0 || clause[0].length < cut)) cut = clause[0].length;
      }
      if (cut < 0 && this.pending.length > this.maxChars) {
        const window = this.pending.slice(0, this.maxChars);
        const comma = window.lastIndexOf(", ");
        const space = window.lastIndexOf(" ");
        cut = comma > this.maxChars / 2 ? comma + 2 : space > 0 ? space + 1 : this.maxChars;
      }
      if (cut < 0) break;
      const sentence = this.pending.slice(0, cut).trim();
      this.pending = this.pending.slice(cut);
      if (sentence !== "") {
        sentences.push(sentence);
        this.cutAny = true;
      }
    }
    return sentences;
  }

  /** What is left when the reply is complete. */
  flush(): string[] {
    const rest = this.pending.trim();
    this.pending = "";
    return rest === "" ? [] : [rest];
  }
}

/**
 * The part of a sentence that was said when its playback stopped at `fraction` (0–1) of its audio: whole words,
 * by their share of the sentence's letters (speech time follows letters closely enough to cut between words).
 */
export function spokenPart(sentence: string, fraction: number): string {
  if (fraction >= 1) return sentence;
  const words = sentence.split(/\s+/u).filter((word) => word !== "");
  const total = words.reduce((sum, word) => sum + word.length, 0);
  const kept: string[] = [];
  let said = 0;
  for (const word of words) {
    said += word.length;
    if (said / total > fraction) break;
    kept.push(word);
  }
  return kept.join(" ");
}

/** Okapi BM25 over pre-tokenized documents, with the usual constants. */
const K1 = 1.2;
const B = 0.75;

export interface Bm25Match {
  index: number;
  score: number;
  /**
   * The score divided by the sum of the query terms' IDF, which is what an entry of average length containing each
   * query term exactly once would score. About 1 means "covers the whole query"; query terms absent from every
   * document count in the divisor, so off-topic words in a question lower it.
   */
  relevance: number;
}

export class Bm25Index {
  private readonly termCounts: Map<string, number>[];
  private readonly lengths: number[];
  private readonly documentFrequency = new Map<string, number>();
  private readonly averageLength: number;

  constructor(documents: readonly (readonly string[])[]) {
    this.termCounts = documents.map((tokens) => {
      const counts = new Map<string, number>();
      for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
      for (const token of counts.keys()) this.documentFrequency.set(token, (this.documentFrequency.get(token) ?? 0) + 1);
      return counts;
    });
    this.lengths = documents.map((tokens) => tokens.length);
    const total = this.lengths.reduce((sum, length) => sum + length, 0);
    this.averageLength = total > 0 ? total / documents.length : 1;
  }

  get size(): number {
    return this.termCounts.length;
  }

  /**
   * The non-negative IDF variant (Lucene's), so a term found in most documents still counts a little rather than
   * against. A term no document contains weighs as much as the rarest term some document contains: with the textbook
   * formula it would outweigh every known term, and in a knowledge base of a few entries one unknown word in a
   * question would sink an otherwise clear match.
   */
  idf(term: string): number {
    const n = Math.max(1, this.documentFrequency.get(term) ?? 0);
    return Math.log(1 + (this.size - n + 0.5) / (n + 0.5));
  }

  /** Documents sharing at least one term with the query, best first; ties keep document order, so results are deterministic. */
  rank(query: readonly string[]): Bm25Match[] {
    const terms = [...new Set(query)];
    const reference = terms.reduce((sum, term) => sum + this.idf(term), 0);
    const matches: Bm25Match[] = [];
    this.termCounts.forEach((counts, index) => {
      const lengthNorm = K1 * (1 - B + (B * (this.lengths[index] ?? 0)) / this.averageLength);
      let score = 0;
      for (const term of terms) {
        const tf = counts.get(term) ?? 0;
        if (tf > 0) score += (this.idf(term) * tf * (K1 + 1)) / (tf + lengthNorm);
      }
      if (score > 0) matches.push({ index, score, relevance: reference > 0 ? score / reference : 0 });
    });
    return matches.sort((a, b) => b.score - a.score || a.index - b.index);
  }
}

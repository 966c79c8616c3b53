/**
 * The scoring side of `SearchIndex`: minisearch's inverted index copied into flat arrays (per term and
 * field: the documents holding it and how often), scored with minisearch's BM25+ arithmetic in the same
 * order of operations, so a query without repeated terms gets the very scores minisearch's own `search`
 * gave (to the bit). What changes is the cost: one pass over each distinct term's postings into a reused
 * score array and a top-k selection, instead of a Map of result objects per query term and a sort of every
 * match; a repeated term is scored once, weighted by how often the query holds it (as minisearch, which
 * added its score once per occurrence, counted it); and the work stops at a deadline.
 */
import type { AsPlainObject } from 'minisearch';
import { type ParsedQuery, SearchTimeoutError } from './query.js';

/** One term in one field: the documents (positions in the corpus) that hold it, and how often. */
interface FieldPostings {
  docs: Int32Array;
  freqs: Float64Array;
}

export interface ScoredDoc {
  /** The document's position in the corpus. */
  i: number;
  score: number;
}

export interface ScoringParams {
  k1: number;
  b: number;
  delta: number;
  /** Per searched field, in minisearch's field order: its name and weight. */
  fields: readonly { name: string; boost: number }[];
}

export class Postings {
  readonly #terms = new Map<string, (FieldPostings | undefined)[]>();
  /** Per searched field: each document's field length (its number of distinct terms), by corpus position. */
  readonly #lengths: Float64Array[];
  readonly #avgLengths: number[];
  readonly #count: number;
  readonly #params: ScoringParams;
  // Scratch, reused by every query (search is synchronous, so one query uses them at a time).
  readonly #total: Float64Array;
  readonly #termScore: Float64Array;
  readonly #matched: Int32Array;
  readonly #inTerm: Uint8Array;

  /** `plain` is minisearch's `toJSON()` of an index whose documents' ids are their corpus positions. */
  constructor(plain: AsPlainObject, params: ScoringParams) {
    this.#params = params;
    this.#count = plain.documentCount;
    const position = new Map<number, number>();
    const n = Object.keys(plain.documentIds).length;
    for (const [short, id] of Object.entries(plain.documentIds)) {
      if (!(Number.isInteger(id) && (id as number) >= 0 && (id as number) < n))
        throw new Error(`document id ${JSON.stringify(id)} is not a corpus position below ${n}`);
      position.set(Number(short), id as number);
    }
    const fieldIds = params.fields.map(({ name }) => plain.fieldIds[name]);
    this.#avgLengths = fieldIds.map((f) => plain.averageFieldLength[f]);
    this.#lengths = fieldIds.map(() => new Float64Array(n));
    for (const [short, lengths] of Object.entries(plain.fieldLength)) {
      const i = position.get(Number(short)) as number;
      fieldIds.forEach((f, j) => {
        this.#lengths[j][i] = lengths[f] ?? 0;
      });
    }
    for (const [term, data] of plain.index) {
      const perField = fieldIds.map((f) => {
        const freqs = data[f];
        if (freqs === undefined) return undefined;
        const entries = Object.entries(freqs);
        const p: FieldPostings = {
          docs: new Int32Array(entries.length),
          freqs: new Float64Array(entries.length),
        };
        entries.forEach(([short, tf], j) => {
          p.docs[j] = position.get(Number(short)) as number;
          p.freqs[j] = tf;
        });
        return p;
      });
      if (perField.some((p) => p !== undefined)) this.#terms.set(term, perField);
    }
    this.#total = new Float64Array(n);
    this.#termScore = new Float64Array(n);
    this.#matched = new Int32Array(n);
    this.#inTerm = new Uint8Array(n);
  }

  /**
   * The k best documents, best first (ties: corpus order). Throws `SearchTimeoutError` once `Date.now()`
   * passes `deadline` (checked before each term and field).
   */
  topK(query: ParsedQuery, k: number, deadline = Number.POSITIVE_INFINITY): ScoredDoc[] {
    const { k1, b, delta, fields } = this.#params;
    const total = this.#total;
    const termScore = this.#termScore;
    const matched = this.#matched;
    const inTerm = this.#inTerm;
    const touched: number[] = [];
    const termDocs: number[] = [];
    try {
      query.terms.forEach((term, t) => {
        const perField = this.#terms.get(term);
        if (perField === undefined) return;
        termDocs.length = 0;
        fields.forEach(({ boost }, f) => {
          const p = perField[f];
          if (p === undefined) return;
          if (Date.now() > deadline) throw new SearchTimeoutError('the search ran past its deadline');
          // minisearch: termWeight · termBoost · fieldBoost · docBoost · bm25, left to right, with
          // termWeight = docBoost = 1 and termBoost = the term's count in the query.
          const weight = query.counts[t] * boost;
          const idf = Math.log(1 + (this.#count - p.docs.length + 0.5) / (p.docs.length + 0.5));
          const avg = this.#avgLengths[f];
          const lengths = this.#lengths[f];
          for (let j = 0; j < p.docs.length; j++) {
            const d = p.docs[j];
            const tf = p.freqs[j];
            const bm25 = idf * (delta + (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[d]) / avg)));
            if (inTerm[d] === 0) {
              inTerm[d] = 1;
              termDocs.push(d);
              termScore[d] = weight * bm25;
            } else termScore[d] += weight * bm25;
          }
        });
        // minisearch adds up each term's whole score (its fields summed first), term after term.
        for (const d of termDocs) {
          if (matched[d] === 0) touched.push(d);
          total[d] += termScore[d];
          matched[d]++;
          inTerm[d] = 0;
        }
      });
      return this.#best(touched, k);
    } finally {
      for (const d of touched) {
        total[d] = 0;
        matched[d] = 0;
      }
      for (const d of termDocs) inTerm[d] = 0;
    }
  }

  /** The k highest of the touched documents' scores, by score and then corpus position. */
  #best(touched: readonly number[], k: number): ScoredDoc[] {
    const best: ScoredDoc[] = [];
    const before = (x: ScoredDoc, y: ScoredDoc) => x.score > y.score || (x.score === y.score && x.i < y.i);
    for (const d of touched) {
      // minisearch multiplied each score by its number of matched terms and SearchIndex divided it back out;
      // kept, so scores stay those of earlier versions to the last bit.
      const q = this.#matched[d];
      const c = { i: d, score: (this.#total[d] * q) / q };
      if (best.length === k && !before(c, best[k - 1])) continue;
      let at = best.length === k ? k - 1 : best.length;
      while (at > 0 && before(c, best[at - 1])) {
        best[at] = best[at - 1];
        at--;
      }
      best[at] = c;
    }
    return best;
  }
}

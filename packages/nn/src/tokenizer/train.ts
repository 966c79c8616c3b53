/**
 * BPE training. The corpus is cut at special tokens, pre-tokenised, and reduced to a table of distinct
 * pieces with their counts. Each step then merges the most frequent adjacent pair of tokens, weighted by
 * piece count. The step is incremental: pair counts live in a map, a lazy max-heap finds the best pair,
 * and an index from each pair to the pieces that contain it means a merge only revisits those pieces.
 *
 * Ties between equally frequent pairs go to the smaller (left id, right id), so the merges depend only on
 * the multiset of pieces in the corpus, not on the order of the texts.
 */
import { BYTE_VOCAB, pieceBytes } from './bytes.js';
import { type PretokenizerName, forEachPiece } from './pretokenize.js';
import { SpecialMatcher, checkSpecialName } from './special.js';
import { Tokenizer } from './tokenizer.js';

export interface TrainBpeOptions {
  /**
   * Total vocabulary wanted: 256 byte tokens + merges + special tokens. Training stops early, with a
   * smaller vocabulary, when no pair occurs at least `minFrequency` times.
   */
  vocabSize: number;
  /** Special tokens, given ids after the merges in this order. They are cut out of the training text. */
  specialTokens?: readonly string[];
  /** A pair must occur at least this many times (weighted by piece count) to be merged. Default 2. */
  minFrequency?: number;
  /** How text is cut into pieces before merging (default `gpt2`). */
  pretokenizer?: PretokenizerName;
}

/** Counts the distinct pre-tokens of a corpus, skipping special tokens. */
export function countPieces(
  texts: Iterable<string>,
  specialTokens: readonly string[] = [],
  pretokenizer: PretokenizerName = 'gpt2',
): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (piece: string) => counts.set(piece, (counts.get(piece) ?? 0) + 1);
  const matcher = new SpecialMatcher(specialTokens);
  const onText = (t: string) => forEachPiece(t, add, pretokenizer);
  const skip = () => {};
  for (const text of texts) matcher.split(text, onText, skip);
  return counts;
}

/** Learns up to `numMerges` merges from piece counts (see the module comment). */
export function learnMerges(
  pieceCounts: ReadonlyMap<string, number>,
  numMerges: number,
  minFrequency = 2,
): Array<[number, number]> {
  const merges: Array<[number, number]> = [];
  if (numMerges <= 0) return merges;
  // Pair keys are left * base + right; base exceeds every id, so keys order pairs by (left, right).
  const base = BYTE_VOCAB + numMerges;
  const words: number[][] = [];
  const freqs: number[] = [];
  for (const [piece, count] of pieceCounts) {
    const ids = pieceBytes(piece);
    if (ids.length < 2) continue;
    words.push(ids);
    freqs.push(count);
  }

  const pairCount = new Map<number, number>();
  const pairWords = new Map<number, number[]>();
  for (let w = 0; w < words.length; w++) {
    const ids = words[w];
    const f = freqs[w];
    for (let i = 0; i + 1 < ids.length; i++) {
      const key = ids[i] * base + ids[i + 1];
      pairCount.set(key, (pairCount.get(key) ?? 0) + f);
      const list = pairWords.get(key);
      if (list === undefined) pairWords.set(key, [w]);
      else if (list[list.length - 1] !== w) list.push(w);
    }
  }
  const heap = new PairHeap();
  for (const [key, count] of pairCount) heap.push(count, key);

  const delta = new Map<number, number>();
  while (merges.length < numMerges) {
    // Pop until an entry matches the pair's current count (older entries are stale).
    let key = -1;
    let count = 0;
    while (heap.size > 0) {
      heap.pop();
      if (pairCount.get(heap.key) === heap.count) {
        key = heap.key;
        count = heap.count;
        break;
      }
    }
    if (key < 0 || count < minFrequency) break;
    const a = Math.floor(key / base);
    const b = key - a * base;
    const id = BYTE_VOCAB + merges.length;
    merges.push([a, b]);
    const list = pairWords.get(key)!;
    pairWords.delete(key);
    pairCount.delete(key);

    delta.clear();
    for (const w of list) {
      const old = words[w];
      const f = freqs[w];
      const merged: number[] = [];
      for (let i = 0; i < old.length; i++) {
        if (old[i] === a && i + 1 < old.length && old[i + 1] === b) {
          merged.push(id);
          i++;
        } else merged.push(old[i]);
      }
      if (merged.length === old.length) continue; // the index entry was stale
      for (let i = 0; i + 1 < old.length; i++) {
        const k = old[i] * base + old[i + 1];
        delta.set(k, (delta.get(k) ?? 0) - f);
      }
      for (let i = 0; i + 1 < merged.length; i++) {
        const k = merged[i] * base + merged[i + 1];
        delta.set(k, (delta.get(k) ?? 0) + f);
        if (merged[i] === id || merged[i + 1] === id) {
          const l = pairWords.get(k);
          if (l === undefined) pairWords.set(k, [w]);
          else if (l[l.length - 1] !== w) l.push(w);
        }
      }
      words[w] = merged;
    }
    for (const [k, d] of delta) {
      if (d === 0 || k === key) continue;
      const c = (pairCount.get(k) ?? 0) + d;
      if (c > 0) {
        pairCount.set(k, c);
        heap.push(c, k);
      } else {
        pairCount.delete(k);
        pairWords.delete(k);
      }
    }
  }
  return merges;
}

/**
 * Trains a byte-level BPE tokenizer on `texts`. Deterministic: the same corpus (in any order) gives the
 * same merges.
 */
export function trainBpe(texts: Iterable<string>, options: TrainBpeOptions): Tokenizer {
  const specialTokens = options.specialTokens ?? [];
  specialTokens.forEach((s, i) => {
    checkSpecialName(s, `trainBpe: specialTokens[${i}]`);
  });
  const { vocabSize } = options;
  const minVocab = BYTE_VOCAB + new Set(specialTokens).size;
  if (!Number.isInteger(vocabSize) || vocabSize < minVocab) {
    throw new Error(
      `trainBpe: vocabSize must be an integer >= ${minVocab} (256 bytes + ${minVocab - BYTE_VOCAB} special tokens), got ${vocabSize}`,
    );
  }
  const minFrequency = options.minFrequency ?? 2;
  if (!(minFrequency >= 1)) throw new Error(`trainBpe: minFrequency must be >= 1, got ${minFrequency}`);
  const { pretokenizer } = options;
  const pieces = countPieces(texts, specialTokens, pretokenizer);
  const merges = learnMerges(pieces, vocabSize - minVocab, minFrequency);
  return new Tokenizer({ merges, specialTokens, pretokenizer });
}

/** Max-heap of (count, key) entries; ties go to the smaller key. `pop` leaves the entry in count/key. */
class PairHeap {
  private readonly counts: number[] = [];
  private readonly keys: number[] = [];
  count = 0;
  key = 0;

  get size(): number {
    return this.counts.length;
  }

  /** Whether (c1, k1) comes out before (c2, k2). */
  private static before(c1: number, k1: number, c2: number, k2: number): boolean {
    return c1 > c2 || (c1 === c2 && k1 < k2);
  }

  push(count: number, key: number): void {
    const { counts, keys } = this;
    let i = counts.length;
    counts.push(count);
    keys.push(key);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!PairHeap.before(count, key, counts[p], keys[p])) break;
      counts[i] = counts[p];
      keys[i] = keys[p];
      i = p;
    }
    counts[i] = count;
    keys[i] = key;
  }

  pop(): void {
    const { counts, keys } = this;
    this.count = counts[0];
    this.key = keys[0];
    const lc = counts.pop()!;
    const lk = keys.pop()!;
    const n = counts.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && PairHeap.before(counts[r], keys[r], counts[l], keys[l]) ? r : l;
      if (!PairHeap.before(counts[c], keys[c], lc, lk)) break;
      counts[i] = counts[c];
      keys[i] = keys[c];
      i = c;
    }
    counts[i] = lc;
    keys[i] = lk;
  }
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Tokenizer, countPieces, learnMerges, trainBpe } from '../src/index.js';
import { MergeTable } from '../src/tokenizer/merge.js';
import { englishLike, prng } from './tokenizer-corpus.js';

/** Straightforward BPE training: recount every pair at every step. The reference for `learnMerges`. */
function naiveMerges(counts: Map<string, number>, numMerges: number, minFrequency: number) {
  let words = [...counts].map(([w, c]) => ({ ids: [...new TextEncoder().encode(w)], c }));
  const merges: Array<[number, number]> = [];
  while (merges.length < numMerges) {
    const pairs = new Map<string, number>();
    for (const { ids, c } of words) {
      for (let i = 0; i + 1 < ids.length; i++) {
        const k = `${ids[i]},${ids[i + 1]}`;
        pairs.set(k, (pairs.get(k) ?? 0) + c);
      }
    }
    let best: [number, number] | null = null;
    let bestCount = 0;
    for (const [k, n] of pairs) {
      const [a, b] = k.split(',').map(Number);
      if (n > bestCount || (n === bestCount && best && (a < best[0] || (a === best[0] && b < best[1])))) {
        best = [a, b];
        bestCount = n;
      }
    }
    if (best === null || bestCount < minFrequency) break;
    const id = 256 + merges.length;
    merges.push(best);
    words = words.map(({ ids, c }) => {
      const out: number[] = [];
      for (let i = 0; i < ids.length; i++) {
        if (i + 1 < ids.length && ids[i] === best[0] && ids[i + 1] === best[1]) {
          out.push(id);
          i++;
        } else out.push(ids[i]);
      }
      return { ids: out, c };
    });
  }
  return merges;
}

const corpus = englishLike(300_000, 11);

describe('trainBpe', () => {
  it('learns the same merges as a naive recount-everything trainer', () => {
    const counts = countPieces([englishLike(30_000, 5), 'aaaa aaa banana bananas 1111 ====== \n\n\n  ']);
    const reference = naiveMerges(counts, 300, 2);
    expect(reference).toHaveLength(300);
    expect(learnMerges(counts, 300, 2)).toEqual(reference);
    expect(learnMerges(counts, 300, 5)).toEqual(naiveMerges(counts, 300, 5));
  });

  it('is deterministic, and independent of the order of the texts', () => {
    const paragraphs = corpus.split('\n\n').map((p) => `${p}\n\n`);
    const rand = prng(3);
    const shuffled = [...paragraphs].sort(() => rand() - 0.5);
    const a = trainBpe(paragraphs, { vocabSize: 1000 }).toJSON();
    const b = trainBpe(paragraphs, { vocabSize: 1000 }).toJSON();
    const c = trainBpe(shuffled, { vocabSize: 1000 }).toJSON();
    expect(b.merges).toEqual(a.merges);
    expect(c.merges).toEqual(a.merges);
    expect(a.merges.length).toBe(1000 - 256);
  });

  it('compresses held-out text of the same kind to well under one token per byte', () => {
    const tok = trainBpe([corpus], { vocabSize: 2000, specialTokens: ['<eos>', '<pad>'] });
    expect(tok.vocabSize).toBe(2000);
    const held = englishLike(50_000, 12);
    const ids = tok.encode(held);
    const perByte = ids.length / Buffer.byteLength(held);
    expect(perByte).toBeLessThan(0.3);
    expect(tok.decode(ids)).toBe(held);
    // Common words become single tokens.
    expect(tok.encode(' the').length).toBe(1);
  });

  it('segments training words the way training merged them', () => {
    const counts = countPieces([corpus]);
    const merges = learnMerges(counts, 700);
    const tok = new Tokenizer({ merges });
    // The top pieces should each be a single token once enough merges exist.
    const top = [...counts].sort((x, y) => y[1] - x[1]).slice(0, 50);
    for (const [piece] of top) expect(tok.encode(piece)).toHaveLength(1);
  });

  it('stops early when no pair reaches minFrequency', () => {
    const tok = trainBpe(['ab ab cd'], { vocabSize: 1000, minFrequency: 2 });
    // Only (a, b) occurs twice; after it merges, every remaining pair occurs once.
    expect(tok.toJSON().merges).toEqual([[97, 98]]);
    expect(tok.vocabSize).toBe(257);
    expect(trainBpe([], { vocabSize: 500 }).vocabSize).toBe(256);
  });

  it('validates its options', () => {
    expect(() => trainBpe([], { vocabSize: 257, specialTokens: ['<a>', '<b>'] })).toThrow(
      'trainBpe: vocabSize must be an integer >= 258 (256 bytes + 2 special tokens), got 257',
    );
    expect(() => trainBpe([], { vocabSize: 300, minFrequency: 0 })).toThrow(
      'trainBpe: minFrequency must be >= 1, got 0',
    );
    expect(() => new Tokenizer({ merges: [[0, 300]] })).toThrow(
      'Tokenizer: field "merges[0]" must be a pair of token ids below 256, got [0,300]',
    );
  });
});

describe('MergeTable', () => {
  it('the rank-min scan and the heap give the same segmentation', () => {
    const table = new MergeTable(learnMerges(countPieces([corpus]), 600));
    const text = new TextEncoder().encode(corpus.slice(0, 20_000));
    fc.assert(
      fc.property(fc.nat(text.length - 1), fc.integer({ min: 2, max: 300 }), (start, len) => {
        const ids = [...text.subarray(start, start + len)];
        expect(table.applyHeap([...ids])).toEqual(table.applyScan([...ids]));
      }),
      { numRuns: 300 },
    );
    const runs = [...'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'].map((ch) => ch.charCodeAt(0));
    expect(table.applyHeap([...runs])).toEqual(table.applyScan([...runs]));
  });
});

import { Generator } from '@agent-r1/tensor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type KindMix, kindWeights } from '../src/tasks/kind-balance.js';
import { repeatCounts, sampleExamples } from '../src/trainer/permutation.js';

interface Q {
  id: number;
  kind: string;
}
/** 90 common questions, 9 uncommon, 1 rare. */
const examples: Q[] = Array.from({ length: 100 }, (_, id) => ({
  id,
  kind: id < 90 ? 'common' : id < 99 ? 'uncommon' : 'rare',
}));
const kindOf = (q: Q) => q.kind;
const KEYS = { balanceKinds: 'opts.balance', kindBoost: 'opts.boost' };
const mix = (balanceKinds: number, kindBoost = ''): KindMix => ({ balanceKinds, kindBoost, keys: KEYS });

/** Each kind's total weight. */
function shares(weights: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  weights.forEach((w, i) => {
    out[examples[i].kind] = (out[examples[i].kind] ?? 0) + w;
  });
  return out;
}

describe('kindWeights', () => {
  it('keeps the mix at 0, gives every kind the same share at 1, and shares as count^(1-s) between', () => {
    expect(kindWeights(kindOf, examples, mix(0))).toEqual(examples.map(() => 1));
    const even = shares(kindWeights(kindOf, examples, mix(1)));
    expect(even.common).toBeCloseTo(100 / 3, 9);
    expect(even.uncommon).toBeCloseTo(100 / 3, 9);
    expect(even.rare).toBeCloseTo(100 / 3, 9);
    const half = shares(kindWeights(kindOf, examples, mix(0.5)));
    expect(half.common / half.rare).toBeCloseTo(Math.sqrt(90), 9);
    expect(half.uncommon / half.rare).toBeCloseTo(3, 9);
  });

  it('has mean weight 1 whatever the strength, so a pass keeps its size', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), (strength) => {
        const w = kindWeights(kindOf, examples, mix(strength));
        expect(w.reduce((s, x) => s + x, 0)).toBeCloseTo(examples.length, 9);
        // Within a kind every example weighs the same.
        expect(new Set(w.slice(0, 90)).size).toBe(1);
      }),
      { numRuns: 50 },
    );
  });

  it("kindBoost multiplies a kind's share after balancing, keeping mean weight 1", () => {
    const plain = shares(kindWeights(kindOf, examples, mix(0.5)));
    const w = kindWeights(kindOf, examples, mix(0.5, ' rare = 3 ,uncommon=0.5'));
    expect(w.reduce((s, x) => s + x, 0)).toBeCloseTo(examples.length, 9);
    const boosted = shares(w);
    expect(boosted.rare / boosted.common).toBeCloseTo((3 * plain.rare) / plain.common, 9);
    expect(boosted.uncommon / boosted.common).toBeCloseTo((0.5 * plain.uncommon) / plain.common, 9);
    // Without balancing, the boost alone sets the mix.
    const alone = shares(kindWeights(kindOf, examples, mix(0, 'common=2')));
    expect(alone.common / alone.uncommon).toBeCloseTo(20, 9);
  });

  it('names the option and the kind for a bad kindBoost', () => {
    const boost = (kindBoost: string) => () => kindWeights(kindOf, examples, mix(0.5, kindBoost));
    expect(boost('rarest=2')).toThrow(
      "opts.boost: no example of kind 'rarest' (kinds: common, rare, uncommon)",
    );
    expect(boost('rare=0')).toThrow("opts.boost: expected kind=factor with a factor above 0, got 'rare=0'");
    expect(boost('rare')).toThrow("opts.boost: expected kind=factor with a factor above 0, got 'rare'");
    expect(boost('rare=x')).toThrow("got 'rare=x'");
    expect(boost('rare=2,rare=3')).toThrow("opts.boost: kind 'rare' is given twice");
  });

  it('boosts nothing for a known kind that a subset lacks, and still refuses an unknown one', () => {
    const known = new Set(['common', 'rare', 'uncommon', 'absent']);
    const withKnown = (kindBoost: string) => kindWeights(kindOf, examples, mix(0.5, kindBoost), known);
    expect(withKnown('absent=3')).toEqual(kindWeights(kindOf, examples, mix(0.5)));
    expect(() => withKnown('rarest=2')).toThrow(
      "opts.boost: no example of kind 'rarest' (kinds: absent, common, rare, uncommon)",
    );
  });
});

describe('repeatCounts', () => {
  it('repeats each example its weight times on average, rounding up with the chance of the fraction', () => {
    const weights = [0.25, 1, 2.5, 0];
    const g = new Generator(7);
    const totals = [0, 0, 0, 0];
    const passes = 4000;
    for (let p = 0; p < passes; p++) {
      const counts = repeatCounts(weights, g);
      expect(counts[1]).toBe(1);
      expect(counts[3]).toBe(0);
      expect([2, 3]).toContain(counts[2]);
      counts.forEach((c, i) => {
        totals[i] += c;
      });
    }
    expect(totals[0] / passes).toBeCloseTo(0.25, 1);
    expect(totals[2] / passes).toBeCloseTo(2.5, 1);
  });

  it('draws nothing from the generator for whole weights (unbalanced runs keep their streams)', () => {
    const g = new Generator(3);
    repeatCounts([1, 1, 2], g);
    expect(g.random()).toBe(new Generator(3).random());
  });
});

describe('sampleExamples with weights', () => {
  it('draws distinct examples while there are enough, reproducibly from the seed', () => {
    const w = kindWeights(kindOf, examples, mix(1));
    const a = sampleExamples(examples, 40, new Generator(5), w);
    expect(new Set(a.map((q) => q.id)).size).toBe(40);
    expect(sampleExamples(examples, 40, new Generator(5), w)).toEqual(a);
    // Past the last example it starts over.
    expect(sampleExamples(examples, 150, new Generator(5), w).slice(100, 150)).toEqual(
      sampleExamples(examples, 150, new Generator(5), w).slice(0, 50),
    );
  });

  it('draws each kind about equally often with strength 1 (the rare question ~1/3 of single draws)', () => {
    const w = kindWeights(kindOf, examples, mix(1));
    const g = new Generator(11);
    const drawn: Record<string, number> = { common: 0, uncommon: 0, rare: 0 };
    const draws = 3000;
    for (let i = 0; i < draws; i++) drawn[sampleExamples(examples, 1, g, w)[0].kind]++;
    for (const kind of ['common', 'uncommon', 'rare']) expect(drawn[kind] / draws).toBeCloseTo(1 / 3, 1);
  });
});

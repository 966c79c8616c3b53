import { Generator, noGrad, randint } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import { TransformerLM } from '../src/index.js';

const tiny = { vocabSize: 23, dModel: 16, layers: 2, heads: 4, kvHeads: 2, maxLength: 32, seed: 7 };

describe('TransformerLM residual dropout (the `dropout` forward option)', () => {
  const model = new TransformerLM({ ...tiny, copyHead: true, copyMatch: true });
  const ids = randint(0, tiny.vocabSize, [2, 12], { dtype: 'int32', generator: new Generator(3) });
  const logits = (dropout?: { p: number; seed: number }) =>
    Array.from(
      noGrad(() =>
        model.forward(ids, dropout && { dropout: { p: dropout.p, generator: new Generator(dropout.seed) } }),
      ).logits.dataSync(),
    );

  it('changes a pass only when given: the same generator draws the same masks, another seed others', () => {
    const plain = logits();
    expect(logits()).toEqual(plain);
    expect(logits({ p: 0, seed: 1 })).toEqual(plain);
    const dropped = logits({ p: 0.3, seed: 1 });
    expect(dropped).not.toEqual(plain);
    expect(logits({ p: 0.3, seed: 1 })).toEqual(dropped);
    expect(logits({ p: 0.3, seed: 2 })).not.toEqual(dropped);
    // The module's training flag alone drops nothing: generation and scoring stay deterministic.
    model.train(true);
    expect(logits()).toEqual(plain);
  });

  it('keeps the expected activations: over many masks the mean logits approach the plain pass', () => {
    const plain = logits();
    const draws = 200;
    const sum = new Float64Array(plain.length);
    for (let s = 0; s < draws; s++) {
      logits({ p: 0.1, seed: 100 + s }).forEach((v, i) => {
        sum[i] += v;
      });
    }
    const meanGap = plain.reduce((g, v, i) => g + Math.abs(sum[i] / draws - v), 0) / plain.length;
    const oneGap =
      logits({ p: 0.1, seed: 99 }).reduce((g, v, i) => g + Math.abs(v - plain[i]), 0) / plain.length;
    expect(meanGap).toBeLessThan(oneGap / 3);
  });

  it('lets gradients through the kept elements, and refuses a rate outside [0, 1)', () => {
    const out = model.forward(ids, { dropout: { p: 0.5, generator: new Generator(4) } });
    out.logits.sum().backward();
    const grad = Array.from(model.embed.weight.grad?.dataSync() ?? []);
    expect(grad.some((g) => g !== 0)).toBe(true);
    model.zeroGrad();
    expect(() => model.forward(ids, { dropout: { p: 1, generator: new Generator(4) } })).toThrow(
      /dropout\.p must be in \[0, 1\), got 1/,
    );
  });
});

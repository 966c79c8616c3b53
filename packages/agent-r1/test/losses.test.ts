import { type Tensor, memory, tensor } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import {
  aggregateLoss,
  klDivergence,
  klLoss,
  maskCounts,
  policyEntropy,
  ppoLoss,
  tokenEntropy,
  valueLoss,
} from '../src/index.js';

const f64 = (data: number[] | number[][] | number[][][], requiresGrad = false) =>
  tensor(data, { dtype: 'float64', requiresGrad });

function expectClose(actual: Tensor | ArrayLike<number>, expected: number[], digits = 12): void {
  const a = 'dataSync' in actual ? actual.dataSync() : actual;
  expect(a.length).toBe(expected.length);
  for (const [i, e] of expected.entries()) expect(a[i]).toBeCloseTo(e, digits);
}

describe('aggregateLoss', () => {
  const loss = f64([
    [1, 2, 3],
    [4, 5, 6],
    [7, 8, 9],
  ]);
  const mask = f64([
    [1, 1, 0],
    [1, 0, 0],
    [0, 0, 0],
  ]);

  it('gives the documented value in each mode (fully masked rows left out of the sequence mean)', () => {
    expect(aggregateLoss(loss, mask, 'token-mean').itemSync()).toBeCloseTo(7 / 3, 12);
    expect(aggregateLoss(loss, mask, 'seq-mean-token-sum').itemSync()).toBeCloseTo((3 + 4) / 2, 12);
    expect(aggregateLoss(loss, mask, 'seq-mean-token-mean').itemSync()).toBeCloseTo((1.5 + 4) / 2, 12);
    expect(aggregateLoss(loss, mask.mul(0), 'token-mean').itemSync()).toBe(0);
  });

  it('accepts a bool mask and ignores non-finite values under it', () => {
    const withNaN = f64([[1, Number.NaN, 3]]);
    const keep = tensor([[true, false, true]]);
    expect(aggregateLoss(withNaN, keep).itemSync()).toBe(2);
  });

  it.each(['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'] as const)(
    'adds up over row groups divided by the whole batch’s counts (%s)',
    (mode) => {
      const rows = [
        [1, 1, 0],
        [1, 0, 0],
        [0, 0, 0],
      ];
      const counts = maskCounts(rows);
      expect(counts).toEqual({ tokens: 3, rows: 2 });
      const part = (from: number, to: number) =>
        aggregateLoss(
          loss.narrow(0, from, to - from),
          mask.narrow(0, from, to - from),
          mode,
          counts,
        ).itemSync();
      expect(part(0, 1) + part(1, 3)).toBeCloseTo(aggregateLoss(loss, mask, mode).itemSync(), 12);
      expect(aggregateLoss(loss, mask, mode, counts).itemSync()).toBe(
        aggregateLoss(loss, mask, mode).itemSync(),
      );
    },
  );
});

describe('ppoLoss', () => {
  // Tokens: (A, ratio) = (+1, 1.5) clipped; (+1, 0.5) unclipped; (−1, 1.5) unclipped; (−1, 0.5) clipped;
  // (−1, 4) dual-clipped at c = 3; (+2, 1.1) inside the clip range.
  const adv = [1, 1, -1, -1, -1, 2];
  const ratios = [1.5, 0.5, 1.5, 0.5, 4, 1.1];
  const old = [-1, -2, -0.5, -1.5, -3, -0.2];
  const make = () => ({
    logprobs: f64([old.map((o, i) => o + Math.log(ratios[i]))], true),
    oldLogprobs: f64([old]),
    advantages: f64([adv]),
    actionMask: f64([adv.map(() => 1)]),
  });

  it('clips positive and negative advantages, and dual-clips large negative ones', () => {
    const inputs = make();
    // seq-mean-token-sum over one row = the plain sum, so the gradient is the per-token one.
    const r = ppoLoss({ ...inputs, aggregation: 'seq-mean-token-sum' });
    // −1.2 (clip at 1.2), −0.5, 1.5, 0.8 (clip at 0.8), 3 (dual clip), −2.2
    expect(r.loss.itemSync()).toBeCloseTo(-1.2 - 0.5 + 1.5 + 0.8 + 3 - 2.2, 12);
    expect(r.clipFraction.itemSync()).toBeCloseTo(2 / 6, 12);
    expect(r.dualClipFraction.itemSync()).toBeCloseTo(1 / 6, 12);
    // approxKl is k3 = r − 1 − log r, averaged.
    const k3 = ratios.reduce((s, x) => s + x - 1 - Math.log(x), 0) / 6;
    expect(r.approxKl.itemSync()).toBeCloseTo(k3, 12);
    r.loss.backward();
    // −A·ratio where unclipped, 0 where clipped.
    expectClose(inputs.logprobs.grad!, [0, -0.5, 1.5, 0, 0, -2.2]);
  });

  it('without dual clip the large negative-advantage token keeps its unclipped loss and gradient', () => {
    const inputs = make();
    const r = ppoLoss({ ...inputs, aggregation: 'seq-mean-token-sum', dualClip: null });
    expect(r.loss.itemSync()).toBeCloseTo(-1.2 - 0.5 + 1.5 + 0.8 + 4 - 2.2, 12);
    expect(r.dualClipFraction.itemSync()).toBe(0);
    r.loss.backward();
    expectClose(inputs.logprobs.grad!, [0, -0.5, 1.5, 0, 4, -2.2]);
  });

  it('asymmetric clip range (clip-higher)', () => {
    const inputs = make();
    const r = ppoLoss({
      ...inputs,
      aggregation: 'seq-mean-token-sum',
      clipRatioLow: 0.2,
      clipRatioHigh: 0.6,
    });
    // Token 0 (A = +1, ratio 1.5) is now inside [0.8, 1.6]: loss −1.5, gradient −1.5.
    expect(r.loss.itemSync()).toBeCloseTo(-1.5 - 0.5 + 1.5 + 0.8 + 3 - 2.2, 12);
    r.loss.backward();
    expectClose(inputs.logprobs.grad!, [-1.5, -0.5, 1.5, 0, 0, -2.2]);
  });

  it('masked tokens change neither the loss, the metrics nor the gradient', () => {
    const base = make();
    const plain = ppoLoss(base);
    // Same tokens plus a masked one with an extreme ratio and advantage.
    const logprobs = f64([[...old.map((o, i) => o + Math.log(ratios[i])), 5]], true);
    const withMasked = ppoLoss({
      logprobs,
      oldLogprobs: f64([[...old, -5]]),
      advantages: f64([[...adv, 100]]),
      actionMask: f64([[...adv.map(() => 1), 0]]),
    });
    expect(withMasked.loss.itemSync()).toBeCloseTo(plain.loss.itemSync(), 12);
    expect(withMasked.clipFraction.itemSync()).toBeCloseTo(plain.clipFraction.itemSync(), 12);
    expect(withMasked.approxKl.itemSync()).toBeCloseTo(plain.approxKl.itemSync(), 12);
    plain.loss.backward();
    withMasked.loss.backward();
    // token-mean: the per-token gradient divided by the 6 kept tokens.
    expectClose(logprobs.grad!, [...[0, -0.5, 1.5, 0, 0, -2.2].map((g) => g / 6), 0]);
    expectClose(
      base.logprobs.grad!,
      [0, -0.5, 1.5, 0, 0, -2.2].map((g) => g / 6),
    );
  });

  it('aggregation modes over rows of different lengths', () => {
    // ratio 1 everywhere, so the per-token loss is −A.
    const lp = f64([
      [-1, -1, -1],
      [-1, -1, -1],
    ]);
    const inputs = {
      logprobs: lp,
      oldLogprobs: lp,
      advantages: f64([
        [1, 2, 50],
        [3, 60, 70],
      ]),
      actionMask: f64([
        [1, 1, 0],
        [1, 0, 0],
      ]),
    };
    expect(ppoLoss({ ...inputs, aggregation: 'token-mean' }).loss.itemSync()).toBeCloseTo(-2, 12);
    expect(ppoLoss({ ...inputs, aggregation: 'seq-mean-token-sum' }).loss.itemSync()).toBeCloseTo(-3, 12);
    expect(ppoLoss({ ...inputs, aggregation: 'seq-mean-token-mean' }).loss.itemSync()).toBeCloseTo(-2.25, 12);
  });

  it('useActionMask: false (ablation) trains on every response token and needs the response mask', () => {
    const lp = f64([[-1, -1, -1, -1]]);
    const inputs = {
      logprobs: lp,
      oldLogprobs: lp,
      advantages: f64([[7, 1, 2, 3]]),
      actionMask: f64([[0, 1, 0, 1]]),
    };
    expect(ppoLoss(inputs).loss.itemSync()).toBeCloseTo(-2, 12);
    expect(() => ppoLoss({ ...inputs, useActionMask: false })).toThrow(/responseMask/);
    const ablation = ppoLoss({ ...inputs, useActionMask: false, responseMask: f64([[0, 1, 1, 1]]) });
    expect(ablation.loss.itemSync()).toBeCloseTo(-2, 12);
    const ablation2 = ppoLoss({ ...inputs, useActionMask: false, responseMask: f64([[1, 1, 1, 1]]) });
    expect(ablation2.loss.itemSync()).toBeCloseTo(-13 / 4, 12);
  });

  it('frees its intermediates, leaving only the loss and the metric scalars', () => {
    const inputs = make();
    const before = memory().tensors;
    const r = ppoLoss(inputs);
    r.loss.backward();
    expect(memory().tensors).toBe(before + 4 + 1); // the loss, 3 metrics, and logprobs' grad
    for (const t of [r.loss, r.clipFraction, r.dualClipFraction, r.approxKl]) t.dispose();
    inputs.logprobs.zeroGrad();
    expect(memory().tensors).toBe(before);
  });
});

describe('KL to the reference policy', () => {
  const logp = [-0.5, -1.0, -30];
  const ref = [-0.4, -1.5, 0];

  it('k1, k2 and k3 (= low_var_kl, clamped to ±10) per token', () => {
    expectClose(klDivergence(f64(logp), f64(ref), 'k1'), [-0.1, 0.5, -30]);
    expectClose(klDivergence(f64(logp), f64(ref), 'k2'), [0.005, 0.125, 450]);
    const k3 = [Math.exp(0.1) - 1.1, Math.exp(-0.5) - 0.5, 10];
    expectClose(klDivergence(f64(logp), f64(ref), 'k3'), k3);
    expectClose(klDivergence(f64(logp), f64(ref), 'low_var_kl'), k3);
  });

  it('klLoss masks, aggregates, and differentiates (d k3 / d logp = 1 − e^{ref − logp})', () => {
    const lp = f64([logp], true);
    const loss = klLoss({ logprobs: lp, refLogprobs: f64([ref]), actionMask: f64([[1, 1, 0]]) });
    expect(loss.itemSync()).toBeCloseTo((Math.exp(0.1) - 1.1 + Math.exp(-0.5) - 0.5) / 2, 12);
    loss.backward();
    expectClose(lp.grad!, [(1 - Math.exp(0.1)) / 2, (1 - Math.exp(-0.5)) / 2, 0]);
    const k1 = klLoss({
      logprobs: f64([logp]),
      refLogprobs: f64([ref]),
      actionMask: f64([[1, 1, 0]]),
      estimator: 'k1',
    });
    expect(k1.itemSync()).toBeCloseTo(0.2, 12);
  });
});

describe('entropy', () => {
  // Position 0: p = (½, ¼, ¼), H = 1.5 ln 2. Position 1: uniform over 3, H = ln 3.
  const logits = () =>
    f64(
      [
        [
          [Math.log(0.5), Math.log(0.25), Math.log(0.25)],
          [7, 7, 7],
        ],
      ],
      true,
    );

  it('equals −Σ p log p per token', () => {
    expectClose(tokenEntropy(logits()), [1.5 * Math.LN2, Math.log(3)]);
  });

  it('is masked and averaged, with the gradient −p (log p + H)', () => {
    const z = logits();
    expect(policyEntropy({ logits: z, actionMask: f64([[1, 1]]) }).itemSync()).toBeCloseTo(
      (1.5 * Math.LN2 + Math.log(3)) / 2,
      12,
    );
    const h = policyEntropy({ logits: z, actionMask: f64([[1, 0]]) });
    expect(h.itemSync()).toBeCloseTo(1.5 * Math.LN2, 12);
    h.backward();
    expectClose(z.grad!, [-0.25 * Math.LN2, 0.125 * Math.LN2, 0.125 * Math.LN2, 0, 0, 0]);
  });
});

describe('valueLoss', () => {
  it('takes the larger of the plain and clipped squared errors, halved', () => {
    const values = f64([[1.0, 2.0, 0.0, 50]], true);
    const r = valueLoss({
      values,
      oldValues: f64([[0.5, 1.0, 0.2, 0]]),
      returns: f64([[2.0, 1.0, 0.0, 0]]),
      actionMask: f64([[1, 1, 1, 0]]),
      clipRange: 0.2,
    });
    // Token 0: clipped V = 0.7, (0.7 − 2)² = 1.69 > (1 − 2)² = 1. Token 1: clipped V = 1.2, 0.04 < 1.
    // Token 2: both 0. Token 3 is masked.
    expect(r.loss.itemSync()).toBeCloseTo((0.5 * (1.69 + 1 + 0)) / 3, 12);
    expect(r.clipFraction.itemSync()).toBeCloseTo(1 / 3, 12);
    r.loss.backward();
    // Where the clipped error wins the gradient is 0; elsewhere ½ · 2 (V − R) / 3.
    expectClose(values.grad!, [0, 1 / 3, 0, 0]);
  });

  it('without clipping is the plain ½ (V − R)²', () => {
    const r = valueLoss({
      values: f64([[1.0, 2.0]]),
      oldValues: f64([[0.5, 1.0]]),
      returns: f64([[2.0, 1.0]]),
      actionMask: f64([[1, 1]]),
      clipRange: Number.POSITIVE_INFINITY,
    });
    expect(r.loss.itemSync()).toBeCloseTo(0.5, 12);
    expect(r.clipFraction.itemSync()).toBe(0);
  });
});

/**
 * Property-based gradient checks of the fused neural-network ops: softmax family, logprobs, cross-entropy,
 * layer/RMS norm and scaled dot-product attention.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import {
  type Tensor,
  crossEntropy,
  layerNorm,
  logSoftmax,
  logprobs,
  logsumexp,
  rmsNorm,
  scaledDotProductAttention,
  softmax,
} from '../src/index.js';
import { assertGradcheck, shapeArb } from '../src/testing/index.js';
import {
  axisArb,
  bool,
  checkProperty,
  f64,
  idsArb,
  int32,
  latticeArb,
  shapedSpecArb,
  sizeOfShape,
  specArb,
} from './gradient-helpers.js';

const small = { maxRank: 3, maxDim: 4 };

describe('gradients of softmax, logSoftmax and logsumexp', () => {
  for (const [name, op] of [
    ['softmax', softmax],
    ['logSoftmax', logSoftmax],
  ] as const) {
    it(`${name}(x, axis) along a random axis, also of a strided view`, () => {
      const arb = shapedSpecArb(small, { min: -4, max: 4 }).chain((x) =>
        fc.tuple(fc.constant(x), axisArb(Math.max(x.shape.length, 1)), fc.boolean()),
      );
      checkProperty(arb, ([x, axis, view]) => {
        assertGradcheck((t) => op(view && t.rank >= 2 ? t.transpose(0, -1) : t, axis), [f64(x)]);
      });
    });
  }

  it('logsumexp(x, axis, keepdim), including large values and 0-d input', () => {
    const arb = shapedSpecArb(small).chain((x) =>
      fc.tuple(
        fc.constant(x),
        axisArb(Math.max(x.shape.length, 1)),
        fc.boolean(),
        fc.constantFrom(0, 500, -500),
      ),
    );
    checkProperty(arb, ([x, axis, keepdim, shift]) => {
      assertGradcheck((t) => logsumexp(t.add(shift), axis, keepdim), [f64(x)]);
    });
  });
});

describe('gradients of logprobs and crossEntropy', () => {
  const logitsArb = fc
    .tuple(shapeArb({ maxRank: 2, maxDim: 4 }), fc.integer({ min: 1, max: 5 }))
    .chain(([lead, v]) =>
      fc.tuple(
        specArb([...lead, v], { min: -3, max: 3 }),
        fc.constant(lead),
        idsArb(lead, v),
        specArb([...lead, 2 * v], { min: -3, max: 3 }),
      ),
    );

  it('logprobs(logits, targets) for any leading shape, of contiguous and strided logits', () => {
    checkProperty(logitsArb, ([logits, lead, targets, wide]) => {
      const t = int32(lead, targets);
      assertGradcheck((x) => logprobs(x, t), [f64(logits)]);
      // Every other column: a strided view, which logprobs copies.
      assertGradcheck((x) => logprobs(x.slice(-1, 1, undefined, 2), t), [f64(wide)]);
    });
  });

  it('crossEntropy with ignored targets present, every reduction', () => {
    const arb = fc
      .tuple(shapeArb({ minRank: 1, maxRank: 2, maxDim: 4 }), fc.integer({ min: 2, max: 5 }))
      .chain(([lead, v]) =>
        fc.tuple(
          specArb([...lead, v], { min: -3, max: 3 }),
          fc.constant(lead),
          idsArb(lead, v),
          // -100 is the default; a class id can be the ignored one too.
          fc.constantFrom<number | undefined>(undefined, -1, 0, v - 1),
          fc.array(fc.nat(sizeOfShape(lead) - 1), { minLength: 1, maxLength: 3 }),
          fc.constantFrom<'mean' | 'sum' | 'none' | undefined>(undefined, 'mean', 'sum', 'none'),
        ),
      );
    checkProperty(arb, ([logits, lead, ids, ignoreIndex, ignoredAt, reduction]) => {
      const values = [...ids];
      for (const i of ignoredAt) values[i] = ignoreIndex ?? -100;
      const targets = int32(lead, values);
      assertGradcheck((x) => crossEntropy(x, targets, { ignoreIndex, reduction }), [f64(logits)]);
    });
  });

  it('crossEntropy when every target is ignored (mean over nothing)', () => {
    checkProperty(logitsArb, ([logits, lead]) => {
      const targets = int32(lead, new Array(sizeOfShape(lead)).fill(-100));
      assertGradcheck((x) => crossEntropy(x, targets), [f64(logits)]);
    });
  });
});

describe('gradients of layerNorm and rmsNorm', () => {
  // Rows of distinct values (distinct by at least 0.1), so no row has a vanishing variance or mean square.
  const xArb = fc
    .tuple(shapeArb({ maxRank: 2, maxDim: 3 }), fc.integer({ min: 1, max: 6 }))
    .chain(([rows, d]) =>
      fc.tuple(latticeArb([...rows, d]), specArb([d], { min: 0.5, max: 2 }), specArb([d])),
    );

  it('layerNorm with and without weight and bias', () => {
    const arb = fc.tuple(xArb, fc.boolean(), fc.boolean());
    checkProperty(arb, ([[x, w, b], withWeight, withBias]) => {
      const inputs = [x, ...(withWeight ? [w] : []), ...(withBias ? [b] : [])].map((s) => f64(s));
      assertGradcheck((t, ...params) => {
        const weight = withWeight ? params[0] : null;
        const bias = withBias ? params[withWeight ? 1 : 0] : null;
        return layerNorm(t, weight, bias);
      }, inputs);
      // Weight and bias as constants: only x requires grad.
      const [cw, cb] = [f64(w), f64(b)];
      assertGradcheck((t) => layerNorm(t, withWeight ? cw : null, withBias ? cb : null), [f64(x)]);
    });
  });

  it('layerNorm and rmsNorm of a strided (transposed) input, custom eps', () => {
    const arb = fc
      .tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 2, max: 5 }))
      .chain(([n, d]) => fc.tuple(latticeArb([d, n]), specArb([d]), specArb([d])));
    checkProperty(arb, ([x, w, b]) => {
      assertGradcheck((t, wt, bt) => layerNorm(t.transpose(), wt, bt, 1e-3), [f64(x), f64(w), f64(b)]);
      assertGradcheck((t, wt) => rmsNorm(t.transpose(), wt, 1e-3), [f64(x), f64(w)]);
    });
  });

  it('rmsNorm with and without weight', () => {
    checkProperty(fc.tuple(xArb, fc.boolean()), ([[x, w], withWeight]) => {
      const f = (t: Tensor, weight?: Tensor) => rmsNorm(t, weight ?? null);
      assertGradcheck(f, withWeight ? [f64(x), f64(w)] : [f64(x)]);
      const [cx, cw] = [f64(x), f64(w)];
      assertGradcheck((t) => rmsNorm(t, cw), [f64(x)]);
      assertGradcheck((wt) => rmsNorm(cx, wt), [f64(w)]);
    });
  });
});

describe('gradients of scaledDotProductAttention', () => {
  const d3 = fc.integer({ min: 1, max: 3 });
  /** q [B, H, T, D], k and v [B, Hkv, S, D] with H = Hkv · group. */
  const shapesArb = fc
    .record({
      B: fc.integer({ min: 1, max: 2 }),
      Hkv: fc.integer({ min: 1, max: 2 }),
      group: fc.integer({ min: 1, max: 2 }),
      T: d3,
      S: d3,
      D: d3,
    })
    .map(({ B, Hkv, group, T, S, D }) => ({ B, H: Hkv * group, Hkv, T, S, D }));

  const caseArb = shapesArb.chain((s) => {
    // Mask shapes broadcastable to [B, H, T, S]: per batch and head, per query row, or shared.
    const maskShapes = [
      [s.T, s.S],
      [s.B, 1, s.T, s.S],
      [1, s.H, 1, s.S],
      [s.B, s.H, s.T, s.S],
    ];
    const maskArb = fc.option(
      fc
        .constantFrom(...maskShapes)
        .chain((shape) =>
          fc.tuple(
            fc.constant(shape),
            fc.array(fc.boolean(), { minLength: sizeOfShape(shape), maxLength: sizeOfShape(shape) }),
          ),
        ),
      { nil: null },
    );
    return fc.tuple(
      fc.constant(s),
      specArb([s.B, s.H, s.T, s.D]),
      specArb([s.B, s.Hkv, s.S, s.D]),
      specArb([s.B, s.Hkv, s.S, s.D]),
      fc.boolean(),
      maskArb,
      fc.option(fc.double({ min: 0.1, max: 2, noNaN: true }), { nil: undefined }),
    );
  });

  it('causal or not, with or without a bool mask, T != S, grouped-query heads', () => {
    checkProperty(
      caseArb,
      ([, q, k, v, causal, maskSpec, scale]) => {
        const mask = maskSpec ? bool(maskSpec[0], maskSpec[1]) : null;
        assertGradcheck(
          (tq, tk, tv) => scaledDotProductAttention(tq, tk, tv, { causal, mask, scale }),
          [f64(q), f64(k), f64(v)],
        );
      },
      30,
    );
  });

  it('grouped-query heads: Hkv ≥ 2 key/value heads, each shared by 2-3 query heads', () => {
    const arb = fc
      .record({ Hkv: fc.integer({ min: 2, max: 3 }), group: fc.integer({ min: 2, max: 3 }), T: d3, S: d3 })
      .chain(({ Hkv, group, T, S }) =>
        fc.tuple(
          specArb([1, Hkv * group, T, 2]),
          specArb([1, Hkv, S, 2]),
          specArb([1, Hkv, S, 2]),
          fc.boolean(),
        ),
      );
    checkProperty(arb, ([q, k, v, causal]) => {
      assertGradcheck(
        (tq, tk, tv) => scaledDotProductAttention(tq, tk, tv, { causal }),
        [f64(q), f64(k), f64(v)],
      );
      // Only q, or only k and v, requiring grad.
      const [cq, ck, cv] = [f64(q), f64(k), f64(v)];
      assertGradcheck((tq) => scaledDotProductAttention(tq, ck, cv, { causal }), [f64(q)]);
      assertGradcheck((tk, tv) => scaledDotProductAttention(cq, tk, tv, { causal }), [f64(k), f64(v)]);
    });
  });

  it('of strided q, k and v (heads and time swapped in memory)', () => {
    checkProperty(caseArb, ([, q, k, v, causal]) => {
      const swapped = (spec: typeof q) => ({
        ...spec,
        shape: [spec.shape[0], spec.shape[2], spec.shape[1], spec.shape[3]],
      });
      assertGradcheck(
        (tq, tk, tv) =>
          scaledDotProductAttention(tq.transpose(1, 2), tk.transpose(1, 2), tv.transpose(1, 2), { causal }),
        [f64(swapped(q)), f64(swapped(k)), f64(swapped(v))],
      );
    });
  });
});

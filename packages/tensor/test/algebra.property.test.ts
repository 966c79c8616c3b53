/** Algebraic identities on float64 CPU tensors, checked with fast-check over random shapes and values. */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  Generator,
  type Tensor,
  concat,
  crossEntropy,
  layerNorm,
  logprobs,
  logsumexp,
  memory,
  randint,
  randn,
  rand,
  scaledDotProductAttention,
  stack,
  tensor,
  tidy,
  where,
} from '../src/index.js';

const RUNS = { numRuns: 40 };
const dim = (max = 5) => fc.integer({ min: 1, max });
const seedArb = fc.integer({ min: 0, max: 2 ** 31 - 1 });

/** Deterministic float64 normal values drawn from a seed (fast-check picks the seed and the shapes). */
function sampler(seed: number) {
  const generator = new Generator(seed);
  return {
    randn: (shape: number[]) => randn(shape, { dtype: 'float64', generator }),
    randint: (low: number, high: number, shape: number[]) => randint(low, high, shape, { generator }),
    rand: (shape: number[]) => rand(shape, { dtype: 'float64', generator }),
  };
}

/** Same shape and every element within atol + rtol·|expected|. */
function expectClose(actual: Tensor, expected: Tensor, rtol = 1e-10, atol = 1e-10): void {
  expect(actual.shape).toEqual(expected.shape);
  const a = actual.dataSync();
  const e = expected.dataSync();
  for (let i = 0; i < e.length; i++) {
    const err = Math.abs(a[i] - e[i]);
    if (!(err <= atol + rtol * Math.abs(e[i]))) {
      throw new Error(`element ${i}: got ${a[i]}, expected ${e[i]} (shape [${expected.shape}])`);
    }
  }
}

/** Runs a property body in tidy, and checks that the body leaves no tensor behind. */
function scoped(body: () => void): void {
  const before = memory().tensors;
  tidy(body);
  expect(memory().tensors).toBe(before);
}

describe('matmul', () => {
  test('(A B) C ≈ A (B C)', () => {
    fc.assert(
      fc.property(seedArb, dim(), dim(), dim(), dim(), (seed, m, k, n, p) =>
        scoped(() => {
          const s = sampler(seed);
          const [a, b, c] = [s.randn([m, k]), s.randn([k, n]), s.randn([n, p])];
          expectClose(a.matmul(b).matmul(c), a.matmul(b.matmul(c)), 1e-9, 1e-9);
        }),
      ),
      RUNS,
    );
  });

  test('matmul of transposed views equals matmul of contiguous copies', () => {
    fc.assert(
      fc.property(seedArb, dim(), dim(), dim(), fc.boolean(), fc.boolean(), (seed, m, k, n, ta, tb) =>
        scoped(() => {
          const s = sampler(seed);
          const a = ta ? s.randn([k, m]).T : s.randn([m, k]);
          const b = tb ? s.randn([n, k]).T : s.randn([k, n]);
          const got = a.matmul(b);
          const want = a.contiguous().matmul(b.contiguous());
          expectClose(got, want, 1e-12, 1e-12);
          // and against the definition
          const av = a.toArraySync() as number[][];
          const bv = b.toArraySync() as number[][];
          const gv = got.toArraySync() as number[][];
          for (let i = 0; i < m; i++)
            for (let j = 0; j < n; j++) {
              let sum = 0;
              for (let q = 0; q < k; q++) sum += av[i][q] * bv[q][j];
              expect(gv[i][j]).toBeCloseTo(sum, 12);
            }
        }),
      ),
      RUNS,
    );
  });

  test('batched matmul with broadcast batch dims equals per-batch loops', () => {
    fc.assert(
      fc.property(
        seedArb,
        dim(3),
        dim(3),
        dim(4),
        dim(4),
        dim(4),
        fc.boolean(),
        (seed, b1, b2, m, k, n, perm) =>
          scoped(() => {
            const s = sampler(seed);
            const a = s.randn([b1, 1, m, k]);
            // b as a permuted (non-contiguous) view half of the time
            const b = perm ? s.randn([k, b2, n]).permute([1, 0, 2]) : s.randn([b2, k, n]);
            const out = a.matmul(b);
            expect(out.shape).toEqual([b1, b2, m, n]);
            const rows: Tensor[] = [];
            for (let i = 0; i < b1; i++) {
              const per: Tensor[] = [];
              for (let j = 0; j < b2; j++) per.push(a.select(0, i).select(0, 0).matmul(b.select(0, j)));
              rows.push(stack(per));
            }
            expectClose(out, stack(rows), 1e-12, 1e-12);
            // a 1-d vector on either side drops that axis
            const v = s.randn([k]);
            expectClose(v.matmul(b), stack(Array.from({ length: b2 }, (_, j) => v.matmul(b.select(0, j)))));
            expect(a.matmul(s.randn([k])).shape).toEqual([b1, 1, m]);
          }),
      ),
      RUNS,
    );
  });
});

describe('softmax family', () => {
  const shapeArb = fc.array(dim(4), { minLength: 1, maxLength: 4 });

  test('softmax sums to 1 along any axis and equals exp(x) / sum(exp(x))', () => {
    fc.assert(
      fc.property(seedArb, shapeArb, fc.nat(), (seed, shape, axisPick) =>
        scoped(() => {
          const axis = (axisPick % shape.length) - (axisPick % 2 === 0 ? 0 : shape.length);
          const x = sampler(seed).randn(shape).mul(3);
          const y = x.softmax(axis);
          expect(y.shape).toEqual(shape);
          const sums = y.sum(axis);
          expectClose(sums, sums.mul(0).add(1), 1e-12, 1e-12);
          expect(y.min().itemSync()).toBeGreaterThan(0);
          const e = x.exp();
          expectClose(y, e.div(e.sum(axis, true)), 1e-12, 1e-15);
          expectClose(x.logSoftmax(axis), y.log(), 1e-10, 1e-12);
        }),
      ),
      RUNS,
    );
  });

  test('logprobs equals logSoftmax + gather of the target', () => {
    fc.assert(
      fc.property(seedArb, fc.array(dim(3), { minLength: 0, maxLength: 2 }), dim(6), (seed, lead, V) =>
        scoped(() => {
          const s = sampler(seed);
          const logits = s.randn([...lead, V]).mul(4);
          const targets = s.randint(0, V, lead);
          const lp = logprobs(logits, targets);
          expect(lp.shape).toEqual(lead);
          const want = logits.logSoftmax(-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1);
          expectClose(lp, want, 1e-12, 1e-12);
        }),
      ),
      RUNS,
    );
  });

  test('crossEntropy with ignoreIndex is the mean over non-ignored rows', () => {
    fc.assert(
      fc.property(
        seedArb,
        dim(6),
        dim(5),
        fc.constantFrom(-100, -1, 0),
        fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        (seed, N, C, ignoreIndex, drop) =>
          scoped(() => {
            const s = sampler(seed);
            const logits = s.randn([N, C]).mul(2);
            const ids = Array.from(s.randint(0, C, [N]).dataSync()).map((t, i) =>
              drop[i] ? ignoreIndex : t,
            );
            const targets = tensor(Int32Array.from(ids));
            const lv = logits.toArraySync() as number[][];
            const perRow = lv.map((row, i) => {
              const m = Math.max(...row);
              const lse = m + Math.log(row.reduce((acc, x) => acc + Math.exp(x - m), 0));
              return ids[i] === ignoreIndex ? null : lse - row[ids[i]];
            });
            const kept = perRow.filter((x): x is number => x !== null);
            const total = kept.reduce((a, b) => a + b, 0);
            const opts = { ignoreIndex };
            expect(crossEntropy(logits, targets, opts).itemSync()).toBeCloseTo(
              kept.length === 0 ? 0 : total / kept.length,
              10,
            );
            expect(crossEntropy(logits, targets, { ...opts, reduction: 'sum' }).itemSync()).toBeCloseTo(
              total,
              10,
            );
            const none = crossEntropy(logits, targets, {
              ...opts,
              reduction: 'none',
            }).toArraySync() as number[];
            none.forEach((v, i) => {
              expect(v).toBeCloseTo(perRow[i] ?? 0, 10);
            });
          }),
      ),
      RUNS,
    );
  });

  test('logsumexp equals log(sum(exp)) and is stable for large inputs', () => {
    fc.assert(
      fc.property(seedArb, shapeArb, fc.nat(), fc.boolean(), (seed, shape, axisPick, keepdim) =>
        scoped(() => {
          const axis = axisPick % shape.length;
          const x = sampler(seed).randn(shape).mul(5);
          const got = logsumexp(x, axis, keepdim);
          expectClose(got, x.exp().sum(axis, keepdim).log(), 1e-12, 1e-12);
          expectClose(x.logsumexp(axis, keepdim), got, 0, 0);
          // shifting by a large constant shifts the result and does not overflow
          expectClose(logsumexp(x.add(1000), axis, keepdim), got.add(1000), 1e-12, 1e-12);
        }),
      ),
      RUNS,
    );
  });

  test('layerNorm without affine: each row has mean 0 and variance v / (v + eps)', () => {
    fc.assert(
      fc.property(
        seedArb,
        fc.array(dim(3), { minLength: 0, maxLength: 2 }),
        fc.integer({ min: 2, max: 8 }),
        (seed, lead, D) =>
          scoped(() => {
            const x = sampler(seed)
              .randn([...lead, D])
              .mul(3)
              .add(2);
            const eps = 1e-5;
            const y = layerNorm(x, null, null, eps);
            expect(y.shape).toEqual([...lead, D]);
            const mean = y.mean(-1);
            expectClose(mean, mean.mul(0), 0, 1e-12);
            const v = x.var(-1, { correction: 0 });
            expectClose(y.var(-1, { correction: 0 }), v.div(v.add(eps)), 1e-10, 1e-12);
            // and equals (x - mean) / sqrt(var + eps) written with ordinary ops
            const centred = x.sub(x.mean(-1, true));
            expectClose(
              y,
              centred.div(x.var(-1, { correction: 0, keepdim: true }).add(eps).sqrt()),
              1e-10,
              1e-12,
            );
          }),
      ),
      RUNS,
    );
  });
});

describe('attention', () => {
  /** softmax(Q Kᵀ · scale + mask) V with plain ops; K/V heads repeated for grouped-query attention. */
  function naiveAttention(q: Tensor, k: Tensor, v: Tensor, keep: Tensor | null, scale: number): Tensor {
    const [B, H, , D] = q.shape;
    const [, Hkv, S] = k.shape;
    const G = H / Hkv;
    const repeat = (t: Tensor) => t.unsqueeze(2).expand([B, Hkv, G, S, D]).reshape([B, H, S, D]);
    const scores = q.matmul(repeat(k).transpose(-2, -1)).mul(scale);
    const masked = keep ? where(keep, scores, Number.NEGATIVE_INFINITY) : scores;
    return masked.softmax(-1).matmul(repeat(v));
  }

  test('equals the naive computation (causal, masked, T != S KV-cache layout, grouped-query heads)', () => {
    fc.assert(
      fc.property(
        seedArb,
        fc.record({
          B: dim(2),
          Hkv: dim(2),
          G: dim(3),
          T: dim(4),
          extra: fc.integer({ min: 0, max: 3 }),
          D: dim(4),
          causal: fc.boolean(),
          masked: fc.boolean(),
          maskPerBatch: fc.boolean(),
          scale: fc.option(fc.double({ min: 0.1, max: 2, noNaN: true }), { nil: undefined }),
        }),
        (seed, c) =>
          scoped(() => {
            const s = sampler(seed);
            const H = c.Hkv * c.G;
            const S = c.T + c.extra;
            const q = s.randn([c.B, H, c.T, c.D]);
            const k = s.randn([c.B, c.Hkv, S, c.D]);
            const v = s.randn([c.B, c.Hkv, S, c.D]);
            let mask: Tensor | null = null;
            if (c.masked) {
              // random keep-mask, with key 0 always visible so no row is fully masked
              const shape = c.maskPerBatch ? [c.B, 1, c.T, S] : [c.T, S];
              const u = s.rand(shape).dataSync();
              const keepData = Uint8Array.from(u, (x, i) => (i % S === 0 || x > 0.4 ? 1 : 0));
              mask = tensor(keepData, { shape });
            }
            let keep = mask;
            if (c.causal) {
              const rows = Array.from({ length: c.T }, (_, i) =>
                Array.from({ length: S }, (_, j) => j <= i + (S - c.T)),
              );
              const causal = tensor(rows);
              keep = keep ? keep.mul(causal).gt(0) : causal;
            }
            const scale = c.scale ?? 1 / Math.sqrt(c.D);
            const got = scaledDotProductAttention(q, k, v, { causal: c.causal, mask, scale: c.scale });
            expect(got.shape).toEqual([c.B, H, c.T, c.D]);
            expectClose(got, naiveAttention(q, k, v, keep, scale), 1e-10, 1e-12);
          }),
      ),
      { numRuns: 60 },
    );
  });

  test('with a single query against a cache, causal equals unmasked (the last query sees every key)', () => {
    scoped(() => {
      const s = sampler(7);
      const q = s.randn([1, 4, 1, 8]);
      const k = s.randn([1, 2, 5, 8]);
      const v = s.randn([1, 2, 5, 8]);
      expectClose(
        scaledDotProductAttention(q, k, v, { causal: true }),
        scaledDotProductAttention(q, k, v),
        0,
        0,
      );
      // and the first of two causal queries against 5 keys sees only keys 0..3
      const q2 = s.randn([1, 4, 2, 8]);
      const firstRow = scaledDotProductAttention(q2, k, v, { causal: true }).narrow(2, 0, 1);
      const truncated = scaledDotProductAttention(q2.narrow(2, 0, 1), k.narrow(2, 0, 4), v.narrow(2, 0, 4));
      expectClose(firstRow, truncated, 1e-12, 1e-12);
    });
  });
});

describe('shape identities', () => {
  const shapeArb = fc.array(dim(4), { minLength: 1, maxLength: 4 });

  test('sum over all axes equals the sum of sums, in any order and subset', () => {
    fc.assert(
      fc.property(
        seedArb,
        shapeArb,
        fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        (seed, shape, pick) =>
          scoped(() => {
            const x = sampler(seed).randn(shape);
            const total = x.sum();
            let nested: Tensor = x;
            for (let a = shape.length - 1; a >= 0; a--) nested = nested.sum(a);
            expectClose(nested, total, 1e-12, 1e-12);
            let forward: Tensor = x;
            for (let a = 0; a < shape.length; a++) forward = forward.sum(0);
            expectClose(forward, total, 1e-12, 1e-12);
            const axes = shape.map((_, i) => i).filter((i) => pick[i]);
            let partial: Tensor = x;
            for (const a of [...axes].reverse()) partial = partial.sum(a, true);
            expectClose(x.sum(axes, true), partial, 1e-12, 1e-12);
            expectClose(x.sum(axes).sum(), total, 1e-12, 1e-12);
            expectClose(x.mean().mul(x.size), total, 1e-12, 1e-12);
          }),
      ),
      RUNS,
    );
  });

  test('transpose twice is the identity (same values, shape and strides, no copy)', () => {
    fc.assert(
      fc.property(seedArb, shapeArb, fc.nat(), fc.nat(), (seed, shape, i, j) =>
        scoped(() => {
          const x = sampler(seed).randn(shape);
          const [a, b] = [i % shape.length, j % shape.length];
          const storages = memory().storages;
          const tt = x.transpose(a, b).transpose(b, a);
          expect(memory().storages).toBe(storages);
          expect(tt.shape).toEqual(x.shape);
          expect(tt.strides).toEqual(x.strides);
          expect(tt.dataSync()).toEqual(x.dataSync());
          const t = x.transpose(a, b);
          expect(t.shape[a]).toBe(shape[b]);
          expect(t.shape[b]).toBe(shape[a]);
        }),
      ),
      RUNS,
    );
  });

  test('reshape round-trips, from contiguous tensors and from views', () => {
    fc.assert(
      fc.property(seedArb, shapeArb, fc.boolean(), (seed, shape, transposed) =>
        scoped(() => {
          const base = sampler(seed).randn(shape);
          const x = transposed && shape.length >= 2 ? base.transpose(0, -1) : base;
          const flat = x.reshape([-1]);
          expect(flat.shape).toEqual([x.size]);
          const back = flat.reshape(x.shape);
          expect(back.shape).toEqual(x.shape);
          expect(back.dataSync()).toEqual(x.dataSync());
          expect(back.toArraySync()).toEqual(x.toArraySync());
          // via a two-axis factorisation
          const two = x.reshape([x.shape[0], -1]).reshape(x.shape);
          expect(two.dataSync()).toEqual(x.dataSync());
          // concat of splits along any axis is the identity too
          const axis = shape.length - 1;
          expect(concat(x.split(2, axis), axis).dataSync()).toEqual(x.dataSync());
        }),
      ),
      RUNS,
    );
  });
});

/**
 * Property-based gradient checks of reductions, matmul, movement (views and copies) and indexing ops.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import {
  type Tensor,
  clone,
  concat,
  contiguous,
  embedding,
  expand,
  flatten,
  gather,
  indexSelect,
  matmul,
  max,
  mean,
  min,
  narrow,
  permute,
  reshape,
  scatterAdd,
  select,
  slice,
  split,
  squeeze,
  stack,
  sum,
  transpose,
  unsqueeze,
  var as variance,
} from '../src/index.js';
import { assertGradcheck, broadcastPairArb, shapeArb } from '../src/testing/index.js';
import {
  type Spec,
  axisArb,
  checkProperty,
  f64,
  idsArb,
  int32,
  shapedLatticeArb,
  shapedSpecArb,
  sizeOfShape,
  specArb,
} from './gradient-helpers.js';

const small = { maxRank: 3, maxDim: 4 };

/** `undefined` (every axis), one axis, or a list of axes (maybe negative, maybe repeated, maybe empty). */
function axesArb(rank: number): fc.Arbitrary<number | number[] | undefined> {
  // A 0-d tensor takes axis 0 or -1, as in PyTorch.
  if (rank === 0) return fc.constantFrom(undefined, [] as number[], 0, -1, [0, -1]);
  return fc.oneof(
    fc.constant(undefined),
    axisArb(rank),
    fc.array(axisArb(rank), { minLength: 0, maxLength: rank + 1 }),
  );
}

function countOf(shape: readonly number[], axes: number | number[] | undefined): number {
  if (axes === undefined) return sizeOfShape(shape);
  const list = typeof axes === 'number' ? [axes] : axes;
  const set = new Set(list.map((a) => (a < 0 ? a + shape.length : a)));
  return [...set].reduce((n, a) => n * (shape[a] ?? 1), 1);
}

describe('gradients of reductions along random axes', () => {
  const cases = [
    ['sum', sum],
    ['mean', mean],
  ] as const;
  for (const [name, op] of cases) {
    it(`${name}(x, axes, keepdim)`, () => {
      const arb = shapedSpecArb(small).chain((x) =>
        fc.tuple(fc.constant(x), axesArb(x.shape.length), fc.boolean()),
      );
      checkProperty(arb, ([x, axes, keepdim]) => assertGradcheck((t) => op(t, axes, keepdim), [f64(x)]));
    });
  }

  for (const [name, op] of [
    ['max', max],
    ['min', min],
  ] as const) {
    it(`${name}(x, axes, keepdim) with distinct values`, () => {
      const arb = shapedLatticeArb(small).chain((x) =>
        fc.tuple(fc.constant(x), axesArb(x.shape.length), fc.boolean()),
      );
      checkProperty(arb, ([x, axes, keepdim]) => assertGradcheck((t) => op(t, axes, keepdim), [f64(x)]));
    });
  }

  for (const [name, op] of [
    ['max', max],
    ['min', min],
  ] as const) {
    it(`${name} with every extreme attained exactly twice: each copy gets half, as central differences see it`, () => {
      const arb = shapedLatticeArb({ minRank: 1, ...small }).chain((x) =>
        fc.tuple(fc.constant(x), axisArb(x.shape.length), fc.boolean()),
      );
      checkProperty(arb, ([x, axis, keepdim]) => {
        // a and b hold the same distinct values, so along `axis` each extreme appears once in each.
        assertGradcheck((a, b) => op(concat([a, b], axis), axis, keepdim), [f64(x), f64(x)]);
      });
    });
  }

  it('var(x, axes, { correction, keepdim })', () => {
    const arb = shapedSpecArb(small).chain((x) =>
      fc.tuple(fc.constant(x), axesArb(x.shape.length), fc.boolean(), fc.constantFrom(0, 1, 0.5)),
    );
    checkProperty(arb, ([x, axes, keepdim, c]) => {
      // With a single element per group and correction 1 the variance is 0/0: use the population form there.
      const correction = countOf(x.shape, axes) > 1 ? c : 0;
      assertGradcheck((t) => variance(t, axes, { correction, keepdim }), [f64(x)]);
    });
  });

  it('reductions of strided views', () => {
    const arb = shapedLatticeArb({ minRank: 2, maxRank: 3, maxDim: 4 }).chain((x) =>
      fc.tuple(fc.constant(x), axesArb(x.shape.length), fc.boolean()),
    );
    checkProperty(arb, ([x, axes, keepdim]) => {
      for (const op of [sum, mean, max, min]) {
        assertGradcheck((t) => op(t.transpose(0, -1), axes, keepdim), [f64(x)]);
      }
    });
  });
});

describe('gradients of matmul', () => {
  const dim = fc.integer({ min: 1, max: 4 });

  it('2-d by 2-d, also with transposed (strided) operands', () => {
    const arb = fc
      .tuple(dim, dim, dim, fc.boolean())
      .chain(([m, k, n, t]) => fc.tuple(specArb([m, k]), specArb(t ? [n, k] : [k, n]), fc.constant(t)));
    checkProperty(arb, ([a, b, t]) => {
      assertGradcheck((x, y) => matmul(x, t ? y.transpose() : y), [f64(a), f64(b)]);
    });
  });

  it('batched, with batch dims that broadcast (size-1 and missing)', () => {
    const d3 = fc.integer({ min: 1, max: 3 });
    const arb = fc
      .tuple(broadcastPairArb({ maxRank: 2, maxDim: 3 }), d3, d3, d3)
      .chain(([[ba, bb], m, k, n]) => fc.tuple(specArb([...ba, m, k]), specArb([...bb, k, n])));
    checkProperty(arb, ([a, b]) => {
      assertGradcheck(matmul, [f64(a), f64(b)]);
      const [ca, cb] = [f64(a), f64(b)];
      assertGradcheck((x) => matmul(x, cb), [f64(a)]);
      assertGradcheck((y) => matmul(ca, y), [f64(b)]);
    });
  });

  it('a batch of rows times one matrix (computed as one 2-d product), also with a non-contiguous batch', () => {
    const d3 = fc.integer({ min: 1, max: 3 });
    const arb = fc
      .tuple(shapeArb({ maxRank: 2, maxDim: 3 }), d3, d3, d3, fc.boolean())
      .chain(([batch, m, k, n, t]) =>
        fc.tuple(specArb(t ? [...batch, k, m] : [...batch, m, k]), specArb([k, n]), fc.constant(t)),
      );
    checkProperty(arb, ([a, b, t]) => {
      assertGradcheck((x, y) => matmul(t ? x.transpose(-2, -1) : x, y), [f64(a), f64(b)]);
    });
  });

  it('1-d operands: vector·vector, vector·matrix, matrix·vector (batched)', () => {
    const arb = fc
      .tuple(shapeArb({ maxRank: 2, maxDim: 3 }), dim, dim, fc.constantFrom('vv', 'vm', 'mv'))
      .chain(([batch, k, n, kind]) => {
        const a = kind === 'vm' || kind === 'vv' ? [k] : [...batch, n, k];
        const b = kind === 'mv' || kind === 'vv' ? [k] : [...batch, k, n];
        return fc.tuple(specArb(a), specArb(b));
      });
    checkProperty(arb, ([a, b]) => assertGradcheck(matmul, [f64(a), f64(b)]));
  });
});

describe('gradients of movement ops', () => {
  const xArb = shapedSpecArb(small);
  const ranked = shapedSpecArb({ minRank: 1, ...small });

  it('reshape (of contiguous and of strided input, with -1) and flatten', () => {
    const arb = xArb.chain((x) =>
      fc.tuple(
        fc.constant(x),
        fc.shuffledSubarray([...x.shape, 1, 1], {
          minLength: x.shape.length + 2,
          maxLength: x.shape.length + 2,
        }),
        fc.nat(),
        fc.boolean(),
        fc.nat(),
        fc.nat(),
      ),
    );
    checkProperty(arb, ([x, target, inferAt, viaTranspose, s, e]) => {
      const shape = target.map((d, i) => (inferAt % (target.length + 1) === i ? -1 : d));
      assertGradcheck((t) => reshape(viaTranspose && t.rank >= 2 ? t.transpose(0, -1) : t, shape), [f64(x)]);
      const r = Math.max(x.shape.length, 1);
      const [start, end] = [s % r, e % r].sort((p, q) => p - q);
      assertGradcheck((t) => flatten(t, start, end - r), [f64(x)]);
    });
  });

  it('permute and transpose', () => {
    const arb = ranked.chain((x) => {
      const r = x.shape.length;
      const axes = [...Array(r).keys()];
      return fc.tuple(
        fc.constant(x),
        fc.shuffledSubarray(axes, { minLength: r, maxLength: r }),
        axisArb(r),
        axisArb(r),
      );
    });
    checkProperty(arb, ([x, perm, d0, d1]) => {
      assertGradcheck((t) => permute(t, perm).mul(2), [f64(x)]);
      assertGradcheck((t) => transpose(t, d0, d1).exp(), [f64(x)]);
      // Default dims: the last two, or nothing to swap for rank 1.
      assertGradcheck((t) => transpose(t).mul(t.rank >= 2 ? t.transpose() : t), [f64(x)]);
    });
  });

  it('slice (with step, negative and out-of-range bounds), narrow and select', () => {
    const arb = ranked.chain((x) => {
      const r = x.shape.length;
      return axisArb(r).chain((dim) => {
        const size = x.shape[dim < 0 ? dim + r : dim];
        const idx = fc.integer({ min: -size - 1, max: size + 1 });
        return fc.tuple(
          fc.constant(x),
          fc.constant(dim),
          idx,
          fc.option(idx, { nil: undefined }),
          fc.integer({ min: 1, max: 3 }),
          fc
            .integer({ min: 0, max: size })
            .chain((s) => fc.tuple(fc.constant(s), fc.integer({ min: 0, max: size - s }))),
          fc.integer({ min: -size, max: size - 1 }),
        );
      });
    });
    checkProperty(arb, ([x, dim, start, end, step, [nStart, nLength], index]) => {
      assertGradcheck((t) => slice(t, dim, start, end, step).square(), [f64(x)]);
      assertGradcheck((t) => narrow(t, dim, nStart, nLength).mul(3), [f64(x)]);
      assertGradcheck((t) => select(t, dim, index).sin(), [f64(x)]);
    });
  });

  it('expand, squeeze and unsqueeze around size-1 dims', () => {
    const arb = shapeArb({ maxRank: 3, maxDim: 3 }).chain((full) =>
      fc
        .tuple(
          fc.integer({ min: 0, max: full.length }),
          fc.array(fc.boolean(), { minLength: full.length, maxLength: full.length }),
          fc.array(fc.boolean(), { minLength: full.length, maxLength: full.length }),
        )
        .chain(([drop, ones, inferred]) => {
          const own = full.slice(drop).map((d, i) => (ones[i + drop] ? 1 : d));
          const target = full.map((d, i) => (i >= drop && inferred[i] && !ones[i] ? -1 : d));
          return fc.tuple(
            specArb(own),
            fc.constant(target),
            own.length > 0 ? fc.option(axisArb(own.length), { nil: undefined }) : fc.constant(undefined),
            fc.integer({ min: -own.length - 1, max: own.length }),
          );
        }),
    );
    checkProperty(arb, ([x, target, squeezeDim, unsqueezeDim]) => {
      assertGradcheck((t) => expand(t, target).mul(expand(t, target)), [f64(x)]);
      assertGradcheck((t) => squeeze(t, squeezeDim).exp(), [f64(x)]);
      assertGradcheck((t) => unsqueeze(t, unsqueezeDim).square(), [f64(x)]);
    });
  });

  it('split into equal or given sizes, then concat in reverse', () => {
    const arb = ranked.chain((x) => {
      const r = x.shape.length;
      return axisArb(r).chain((dim) => {
        const size = x.shape[dim < 0 ? dim + r : dim];
        const sizes = fc
          .array(fc.integer({ min: 0, max: size }), { minLength: 0, maxLength: 3 })
          .map((cuts) => {
            const points = [0, ...cuts.sort((p, q) => p - q), size];
            return points.slice(1).map((p, i) => p - points[i]);
          });
        return fc.tuple(fc.constant(x), fc.constant(dim), fc.oneof(fc.integer({ min: 1, max: size }), sizes));
      });
    });
    checkProperty(arb, ([x, dim, sizes]) => {
      assertGradcheck(
        (t) => {
          const pieces = split(t, sizes, dim).map((p, i) => p.mul(i + 1));
          return concat(pieces.reverse(), dim);
        },
        [f64(x)],
      );
    });
  });

  it('concat of tensors that differ along dim (including empty ones), and stack', () => {
    const arb = ranked.chain((x) => {
      const r = x.shape.length;
      return axisArb(r).chain((dim) => {
        const d = dim < 0 ? dim + r : dim;
        const other = (n: number) => specArb(x.shape.map((s, i) => (i === d ? n : s)));
        return fc.tuple(
          fc.constant(x),
          fc.constant(dim),
          fc.array(fc.integer({ min: 0, max: 3 }).chain(other), { minLength: 0, maxLength: 2 }),
          fc.array(specArb(x.shape), { minLength: 0, maxLength: 2 }),
          fc.integer({ min: -r - 1, max: r }),
        );
      });
    });
    checkProperty(arb, ([x, dim, rest, same, stackDim]) => {
      assertGradcheck((...ts) => concat(ts, dim).square(), [x, ...rest].map(f64));
      assertGradcheck((...ts) => stack(ts, stackDim).square(), [x, ...same].map(f64));
    });
  });

  it('contiguous and clone, of contiguous and strided input', () => {
    checkProperty(fc.tuple(xArb, fc.boolean()), ([x, view]) => {
      const v = (t: Tensor) => (view && t.rank >= 1 ? t.transpose(0, -1).slice(0, 0, undefined, 2) : t);
      assertGradcheck((t) => contiguous(v(t)).square(), [f64(x)]);
      assertGradcheck((t) => clone(v(t)).square().add(t.sum()), [f64(x)]);
    });
  });

  it('chains of views: transpose, slice, unsqueeze, expand, reshape', () => {
    checkProperty(shapedSpecArb({ minRank: 2, maxRank: 3, maxDim: 4 }), (x) => {
      const f = (t: Tensor) => {
        const v = t.transpose(0, -1).slice(0, 1, undefined, 2).unsqueeze(1);
        const e = v.expand([v.shape[0], 2, ...v.shape.slice(2)]);
        return e.reshape([-1]).square();
      };
      assertGradcheck(f, [f64(x)]);
    });
  });
});

/** The data of x laid out with its axes reversed; `unreverse` views it back in x's shape (rank ≤ 3). */
function reversed(x: Spec): Spec {
  return { shape: [...x.shape].reverse(), values: x.values };
}
function unreverse(t: Tensor): Tensor {
  return t.rank >= 2 ? t.transpose(0, -1) : t;
}

describe('gradients of indexing ops', () => {
  const ranked = shapedSpecArb({ minRank: 1, ...small });

  it('gather along a random dim, with repeated indices', () => {
    const arb = ranked.chain((x) => {
      const r = x.shape.length;
      return axisArb(r).chain((dim) => {
        const d = dim < 0 ? dim + r : dim;
        const shape = fc.tuple(
          ...x.shape.map((s, i) =>
            i === d ? fc.integer({ min: 1, max: 4 }) : fc.integer({ min: 1, max: s }),
          ),
        );
        return shape.chain((is) =>
          fc.tuple(fc.constant(x), fc.constant(dim), fc.constant(is), idsArb(is, x.shape[d])),
        );
      });
    });
    checkProperty(arb, ([x, dim, shape, ids]) => {
      const index = int32(shape, ids);
      assertGradcheck((t) => gather(t, dim, index), [f64(x)]);
      // The same logical input as a transposed (strided) view.
      assertGradcheck((t) => gather(unreverse(t), dim, index), [f64(reversed(x))]);
    });
  });

  it('indexSelect along a random dim, with repeated indices', () => {
    const arb = ranked.chain((x) => {
      const r = x.shape.length;
      return axisArb(r).chain((dim) => {
        const size = x.shape[dim < 0 ? dim + r : dim];
        return fc.tuple(
          fc.constant(x),
          fc.constant(dim),
          fc.array(fc.nat(size - 1), { minLength: 0, maxLength: 5 }),
        );
      });
    });
    checkProperty(arb, ([x, dim, ids]) => {
      const index = int32([ids.length], ids);
      assertGradcheck((t) => indexSelect(t, dim, index), [f64(x)]);
    });
  });

  it('embedding of ids of any rank', () => {
    const arb = fc
      .tuple(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 4 }),
        shapeArb({ maxRank: 2, maxDim: 4 }),
      )
      .chain(([v, d, ids]) => fc.tuple(specArb([v, d]), fc.constant(ids), idsArb(ids, v)));
    checkProperty(arb, ([weight, shape, ids]) => {
      const index = int32(shape, ids);
      assertGradcheck((w) => embedding(w, index), [f64(weight)]);
    });
  });

  it('scatterAdd into x from src, with colliding indices', () => {
    const arb = ranked.chain((x) => {
      const r = x.shape.length;
      return axisArb(r).chain((dim) => {
        const d = dim < 0 ? dim + r : dim;
        const shape = fc.tuple(
          ...x.shape.map((s, i) =>
            i === d ? fc.integer({ min: 1, max: 4 }) : fc.integer({ min: 1, max: s }),
          ),
        );
        return shape.chain((is) =>
          fc.tuple(fc.constant(x), fc.constant(dim), fc.constant(is), idsArb(is, x.shape[d]), specArb(is)),
        );
      });
    });
    checkProperty(arb, ([x, dim, shape, ids, src]) => {
      const index = int32(shape, ids);
      assertGradcheck((t, s) => scatterAdd(t, dim, index, s).square(), [f64(x), f64(src)]);
      // Strided x and src; and only one of them requiring grad.
      assertGradcheck(
        (t, s) => scatterAdd(unreverse(t), dim, index, unreverse(s)),
        [f64(reversed(x)), f64(reversed(src))],
      );
      const [cx, csrc] = [f64(x), f64(src)];
      assertGradcheck((t) => scatterAdd(t, dim, index, csrc), [f64(x)]);
      assertGradcheck((s) => scatterAdd(cx, dim, index, s), [f64(src)]);
    });
  });
});

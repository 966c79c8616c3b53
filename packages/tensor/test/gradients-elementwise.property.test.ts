/**
 * Property-based gradient checks of the elementwise ops (with broadcasting), and proof that gradcheck
 * rejects wrong gradients.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { record } from '../src/autograd.js';
import {
  type Tensor,
  type TensorOrScalar,
  abs,
  add,
  broadcastShapes,
  clamp,
  cos,
  div,
  exp,
  gelu,
  log,
  maximum,
  minimum,
  mul,
  neg,
  noGrad,
  pow,
  relu,
  rsqrt,
  sigmoid,
  silu,
  softplus,
  sin,
  sqrt,
  square,
  sub,
  tanh,
  where,
} from '../src/index.js';
import { type ValueConstraints, assertGradcheck, broadcastPairArb, gradcheck } from '../src/testing/index.js';
import {
  bool,
  checkProperty,
  f64,
  latticeArb,
  shapedLatticeArb,
  shapedSpecArb,
  sizeOfShape,
  specArb,
} from './gradient-helpers.js';

const small = { maxRank: 3, maxDim: 3 };

/** A transposed (non-contiguous) view of x when it has two axes or more, so kernels see strided input. */
function strided(x: Tensor): Tensor {
  return x.rank >= 2 ? x.transpose(0, -1) : x;
}

describe('gradients of binary ops, with broadcasting', () => {
  const ops: [
    string,
    (a: TensorOrScalar, b: TensorOrScalar) => Tensor,
    ValueConstraints,
    ValueConstraints,
  ][] = [
    ['add', add, {}, {}],
    ['sub', sub, {}, {}],
    ['mul', mul, {}, {}],
    ['div', div, {}, { awayFromZero: 0.5 }],
    // a^b needs a > 0 for a real gradient with respect to b.
    ['pow', pow, { min: 0.2, max: 2 }, {}],
  ];
  for (const [name, op, ca, cb] of ops) {
    it(`${name}(a, b) for broadcastable shapes`, () => {
      const arb = broadcastPairArb(small).chain(([sa, sb]) => fc.tuple(specArb(sa, ca), specArb(sb, cb)));
      checkProperty(arb, ([a, b]) => {
        assertGradcheck(op, [f64(a), f64(b)]);
        // Only one side requiring grad (the other's gradient is never asked for).
        const [ca, cb] = [f64(a), f64(b)];
        assertGradcheck((x) => op(x, cb), [f64(a)]);
        assertGradcheck((y) => op(ca, y), [f64(b)]);
      });
    });
    it(`${name}(a, b) of strided views`, () => {
      // strided() reverses the axes of a (rank 2-3), so b is drawn in the reversed shape.
      const arb = shapedSpecArb({ minRank: 2, ...small }, ca).chain((a) =>
        fc.tuple(fc.constant(a), specArb([...a.shape].reverse(), cb)),
      );
      checkProperty(arb, ([a, b]) => assertGradcheck((p, q) => op(strided(p), q), [f64(a), f64(b)]));
    });
  }

  it('binary ops with a number operand on either side', () => {
    const cases: [string, (x: Tensor) => Tensor, ValueConstraints][] = [
      ['x + 2.5', (x) => add(x, 2.5), {}],
      ['1.5 - x', (x) => sub(1.5, x), {}],
      ['-3 * x', (x) => mul(-3, x), {}],
      ['1 / x', (x) => div(1, x), { awayFromZero: 0.5 }],
      ['x / 4', (x) => div(x, 4), {}],
      ['x ** 3 (negative base)', (x) => pow(x, 3), {}],
      ['x ** -2', (x) => pow(x, -2), { awayFromZero: 0.5 }],
      ['x ** 0.5', (x) => pow(x, 0.5), { min: 0.2, max: 3 }],
      ['2 ** x', (x) => pow(2, x), {}],
    ];
    const arb = fc
      .constantFrom(...cases)
      .chain(([label, f, c]) => fc.tuple(fc.constant(label), fc.constant(f), shapedSpecArb(small, c)));
    checkProperty(arb, ([, f, x]) => assertGradcheck(f, [f64(x)]), 40);
  });

  it('the same tensor on both sides (gradients accumulate)', () => {
    checkProperty(shapedSpecArb(small, { awayFromZero: 0.5 }), (x) => {
      assertGradcheck((a) => add(mul(a, a), div(a, a.exp())).sub(a), [f64(x)]);
    });
  });
});

describe('gradients of maximum and minimum', () => {
  // Two lattices offset by half a step: a and b never come within 0.05 of each other.
  const pairArb = broadcastPairArb(small).chain(([sa, sb]) =>
    fc.tuple(latticeArb(sa, { phase: 0.02, unique: false }), latticeArb(sb, { phase: 0.07, unique: false })),
  );
  for (const [name, op] of [
    ['maximum', maximum],
    ['minimum', minimum],
  ] as const) {
    it(`${name}(a, b) without ties, broadcasting`, () => {
      checkProperty(pairArb, ([a, b]) => assertGradcheck(op, [f64(a), f64(b)]));
    });
    it(`${name}(x, number)`, () => {
      checkProperty(shapedLatticeArb(small, { unique: false }), (x) => {
        assertGradcheck((t) => op(t, 0.3), [f64(x)]);
        assertGradcheck((t) => op(-0.3, t), [f64(x)]);
      });
    });
    it(`${name}(a, b) at ties: each side gets half, as central differences see it`, () => {
      checkProperty(shapedSpecArb(small), (a) => {
        assertGradcheck(op, [f64(a), f64(a)]);
      });
    });
  }
});

describe('gradients of unary ops', () => {
  const lattice = { step: 0.1, phase: 0.05 };
  const ops: [string, (x: Tensor) => Tensor, ValueConstraints | 'lattice'][] = [
    ['neg', neg, {}],
    ['exp', exp, {}],
    ['log', log, { min: 0.1, max: 3 }],
    ['sqrt', sqrt, { min: 0.1, max: 3 }],
    ['rsqrt', rsqrt, { min: 0.1, max: 3 }],
    ['square', square, {}],
    ['tanh', tanh, { min: -3, max: 3 }],
    ['sigmoid', sigmoid, { min: -5, max: 5 }],
    ['gelu', gelu, { min: -4, max: 4 }],
    ['silu', silu, { min: -5, max: 5 }],
    ['softplus', softplus, { min: -6, max: 6 }],
    ['sin', sin, { min: -4, max: 4 }],
    ['cos', cos, { min: -4, max: 4 }],
    // Kinked at 0: values at least 0.05 from it.
    ['relu', relu, 'lattice'],
    ['abs', abs, 'lattice'],
  ];
  for (const [name, op, c] of ops) {
    it(`${name}(x), contiguous and strided`, () => {
      const specs =
        c === 'lattice'
          ? shapedLatticeArb({ ...small, maxDim: 4 }, { ...lattice, unique: false })
          : shapedSpecArb({ ...small, maxDim: 4 }, c);
      checkProperty(fc.tuple(specs, fc.boolean()), ([x, view]) => {
        assertGradcheck((t) => op(view ? strided(t) : t), [f64(x)]);
      });
    });
  }

  it('compositions of unary ops (chain rule through several nodes)', () => {
    checkProperty(shapedSpecArb(small, { min: -1.5, max: 1.5 }), (x) => {
      assertGradcheck(
        (t) =>
          sigmoid(tanh(t).mul(3))
            .add(sin(t).square())
            .mul(exp(cos(t))),
        [f64(x)],
      );
    });
  });
});

describe('gradients of clamp and where', () => {
  // Bounds on multiples of 0.1, values on 0.05 + multiples of 0.1: never within 0.05 of a bound.
  const boundsArb = fc
    .tuple(fc.integer({ min: -10, max: 10 }), fc.integer({ min: 0, max: 10 }))
    .map(([lo, width]) => [lo / 10, (lo + width) / 10] as const);
  it('clamp(x, min, max), clamp(x, min), clamp(x, undefined, max)', () => {
    const arb = fc.tuple(
      shapedLatticeArb({ ...small, maxDim: 4 }, { unique: false }),
      boundsArb,
      fc.constantFrom('both', 'min', 'max'),
    );
    checkProperty(arb, ([x, [lo, hi], which]) => {
      const f = (t: Tensor) =>
        which === 'both' ? clamp(t, lo, hi) : which === 'min' ? clamp(t, lo) : clamp(t, undefined, hi);
      assertGradcheck(f, [f64(x)]);
    });
  });

  it('where(cond, a, b) with cond, a and b broadcasting together', () => {
    const arb = broadcastPairArb(small).chain(([sa, sb]) => {
      const full = broadcastShapes('test', sa, sb);
      const condShape = fc
        .tuple(
          fc.integer({ min: 0, max: full.length }),
          fc.array(fc.boolean(), { minLength: full.length, maxLength: full.length }),
        )
        .map(([drop, ones]) => full.slice(drop).map((d, i) => (ones[i + drop] ? 1 : d)));
      return fc.tuple(
        specArb(sa),
        specArb(sb),
        condShape.chain((shape) =>
          fc.tuple(
            fc.constant(shape),
            fc.array(fc.boolean(), { minLength: sizeOfShape(shape), maxLength: sizeOfShape(shape) }),
          ),
        ),
      );
    });
    checkProperty(arb, ([a, b, [shape, values]]) => {
      const cond = bool(shape, values);
      assertGradcheck((x, y) => where(cond, x, y), [f64(a), f64(b)]);
      assertGradcheck((x) => where(cond, x, 0.5), [f64(a)]);
      assertGradcheck((y) => where(cond, -1, y), [f64(b)]);
      // A float condition (non-zero = true) is turned into a bool one.
      const floatCond = cond.cast('float64').mul(-2);
      assertGradcheck((x, y) => where(floatCond, x, y), [f64(a), f64(b)]);
    });
  });
});

describe('gradcheck catches wrong gradients', () => {
  /** x * x with the gradient g * x (the factor 2 forgotten), or 2.02 g * x (1% off) — or correct. */
  function squareWithGrad(factor: number) {
    return (x: Tensor): Tensor => {
      const out = noGrad(() => x.mul(x));
      return record('badSquare', out, [x], (g, [sx]) => [g.mul(sx).mul(factor)], [x]);
    };
  }
  /** a * b + a, whose gradient with respect to a forgets the "+ a" term (or keeps it). */
  function mulAddWithGrad(complete: boolean) {
    return (a: Tensor, b: Tensor): Tensor => {
      const out = noGrad(() => a.mul(b).add(a));
      return record(
        'badMulAdd',
        out,
        [a, b],
        (g, [sa, sb]) => [complete ? g.mul(sb).add(g) : g.mul(sb), g.mul(sa)],
        [a, b],
      );
    };
  }
  /** a + b with b broadcast, whose gradient for b is not summed over the broadcast axes (first slice only). */
  function addUnreducedGrad(a: Tensor, b: Tensor): Tensor {
    const out = noGrad(() => a.add(b));
    return record('badAdd', out, [a, b], (g) => [g, g.select(0, 0)]);
  }
  const xArb = shapedSpecArb({ minRank: 1, ...small }, { awayFromZero: 0.5 });

  it('a missing factor of 2 fails; the right factor passes', () => {
    checkProperty(xArb, (x) => {
      expect(gradcheck(squareWithGrad(1), [f64(x)]).ok).toBe(false);
      expect(gradcheck(squareWithGrad(2.02), [f64(x)]).ok).toBe(false);
      expect(gradcheck(squareWithGrad(2), [f64(x)]).ok).toBe(true);
    });
  });

  it('a missing term fails; the full gradient passes', () => {
    const arb = xArb.chain((a) => fc.tuple(fc.constant(a), specArb(a.shape)));
    checkProperty(arb, ([a, b]) => {
      const broken = gradcheck(mulAddWithGrad(false), [f64(a), f64(b)]);
      expect(broken.ok).toBe(false);
      expect(broken.worst?.input).toBe(0);
      expect(gradcheck(mulAddWithGrad(true), [f64(a), f64(b)]).ok).toBe(true);
    });
  });

  it('a broadcast gradient that is not summed back fails', () => {
    const arb = fc
      .tuple(fc.integer({ min: 2, max: 4 }), fc.integer({ min: 1, max: 3 }))
      .chain(([n, m]) => fc.tuple(specArb([n, m]), specArb([m])));
    checkProperty(arb, ([a, b]) => {
      expect(gradcheck(addUnreducedGrad, [f64(a), f64(b)]).ok).toBe(false);
      assertGradcheck(add, [f64(a), f64(b)]);
    });
  });

  it('assertGradcheck throws with the mismatch', () => {
    checkProperty(xArb, (x) => {
      expect(() => assertGradcheck(squareWithGrad(1), [f64(x)])).toThrow(/gradient mismatch for input 0/);
    });
  });
});

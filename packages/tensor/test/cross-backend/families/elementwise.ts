/** Unary (every kernel, float32 and int32), binary with broadcasting, where, casts and copies of views. */
import fc from 'fast-check';
import { test } from 'vitest';
import {
  BINARY_OPS,
  type BinaryOp,
  type Tensor,
  UNARY_OPS,
  type UnaryOp,
  cast,
  concat,
  getBackend,
  permute,
  slice,
  sum,
  transpose,
  where,
  Tensor as TensorClass,
} from '../../../src/index.js';
import { broadcastPairArb, shapeArb } from '../../../src/testing/index.js';
import { checkSame, f32Values, ints, leaf, property, sizeOf } from '../compare.js';
import { POSITIVE_ONLY, grads, shaped, weighted } from '../helpers.js';
import type { Family, SuiteOptions } from '../options.js';

export function familiesElementwise(
  device: string,
  options: SuiteOptions,
  family: (name: Family, body: () => void) => void,
): void {
  const { runs, tolerances: tol } = options;
  family('elementwise', () => {
    test('every unary kernel, on strided views', async () => {
      await property(
        device,
        fc.tuple(fc.constantFrom(...UNARY_OPS), shaped({ maxRank: 3, maxDim: 5 })),
        async ([op, s]) => {
          const vals = POSITIVE_ONLY.has(op) ? s.x.map((v) => Math.fround(Math.abs(v) + 0.1)) : s.x;
          await checkSame(
            device,
            (dev) => {
              const x = leaf(dev, s.shape, vals);
              const xv = x.rank >= 2 ? transpose(x, 0, -1) : x;
              const out = TensorClass.empty(getBackend(dev), xv.shape, 'float32');
              getBackend(dev).kernels.unary(op, xv, out);
              return [out];
            },
            tol.elementwise,
            `unary ${op} [${s.shape}]`,
          );
        },
        runs * 3,
      );
    });

    test('every unary kernel at its limits: ±0, tiny, large, ±Infinity, NaN', async () => {
      // Where a formula could overflow or cancel (sigmoid's e^−x, GELU's x³, tanh's e^2x), every backend
      // must reach the CPU's limit. sin and cos of large arguments are left to each library's reduction.
      const edges = [0, -0, 1e-30, -1e-30, 0.5, -0.5, 20, -20, 100, -100, 1e4, -1e4];
      const specials = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN];
      for (const op of UNARY_OPS) {
        const trig = op === 'sin' || op === 'cos';
        const vals = trig ? edges.filter((v) => Math.abs(v) <= 100) : [...edges, ...specials];
        await checkSame(
          device,
          (dev) => {
            const x = leaf(dev, [vals.length], vals);
            const out = TensorClass.empty(getBackend(dev), x.shape, 'float32');
            getBackend(dev).kernels.unary(op, x, out);
            return [out];
          },
          tol.elementwise,
          `unary ${op} at its limits`,
        );
      }
    });

    test('every binary kernel on every pair of special values', async () => {
      // NaN first or second (maximum keeps a first NaN), signed zeros, infinities, ±1 (pow's special
      // cases), a fraction and a negative base (pow of a negative base to a fraction is NaN).
      const specials = [
        0,
        -0,
        1,
        -1,
        2.5,
        -3,
        0.5,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        Number.NaN,
      ];
      const k = specials.length;
      for (const op of BINARY_OPS) {
        await checkSame(
          device,
          (dev) => {
            const a = leaf(dev, [k, 1], specials);
            const b = leaf(dev, [1, k], specials);
            const outType = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'].includes(op) ? 'bool' : 'float32';
            const out = TensorClass.empty(getBackend(dev), [k, k], outType);
            getBackend(dev).kernels.binary(op, a.expand([k, k]), b.expand([k, k]), out);
            return [out];
          },
          tol.elementwise,
          `binary ${op} of special values`,
        );
      }
    });

    test('unary int32 kernels', async () => {
      const intOps: UnaryOp[] = ['neg', 'abs', 'sign', 'square', 'relu', 'step', 'logical_not'];
      await property(
        device,
        fc.tuple(
          fc.constantFrom(...intOps),
          shapeArb({ maxRank: 2, maxDim: 6 }).chain((shape) =>
            fc.record({
              shape: fc.constant(shape),
              x: fc.array(fc.integer({ min: -1000, max: 1000 }), {
                minLength: sizeOf(shape),
                maxLength: sizeOf(shape),
              }),
            }),
          ),
        ),
        async ([op, s]) => {
          await checkSame(
            device,
            (dev) => {
              const x = ints(dev, s.shape, s.x);
              const out = TensorClass.empty(getBackend(dev), x.shape, 'int32');
              getBackend(dev).kernels.unary(op, x, out);
              return [out];
            },
            tol.elementwise,
            `unary int32 ${op}`,
          );
        },
        runs,
      );
    });

    test('unary ops forward and backward through the Tensor API', async () => {
      const ops = [
        'exp',
        'log',
        'sqrt',
        'rsqrt',
        'tanh',
        'sigmoid',
        'relu',
        'gelu',
        'silu',
        'softplus',
        'sin',
        'cos',
        'abs',
        'neg',
        'square',
      ] as const;
      await property(
        device,
        fc.tuple(fc.constantFrom(...ops), shaped({ maxRank: 3, maxDim: 5 })),
        async ([op, s]) => {
          const positive = op === 'log' || op === 'sqrt' || op === 'rsqrt';
          // Keep relu/abs away from their kink at 0, where the CPU and GPU may pick different sides.
          const vals = s.x.map((v) =>
            positive ? Math.fround(Math.abs(v) + 0.1) : Math.abs(v) < 1e-3 ? 0.5 : v,
          );
          await checkSame(
            device,
            (dev) => {
              const x = leaf(dev, s.shape, vals, true);
              const y = (x as unknown as Record<string, () => Tensor>)[op]();
              weighted(y, s.w, dev).backward();
              return [y, ...grads(x)];
            },
            tol.elementwise,
            `${op} [${s.shape}]`,
          );
        },
        runs * 2,
      );
    });

    test('binary ops with broadcasting, forward and backward', async () => {
      const arb = fc
        .tuple(fc.constantFrom(...BINARY_OPS), broadcastPairArb({ maxRank: 3, maxDim: 5 }))
        .chain(([op, [sa, sb]]) =>
          fc.record({
            op: fc.constant(op),
            sa: fc.constant(sa),
            sb: fc.constant(sb),
            a: f32Values(sizeOf(sa), op === 'pow' ? 0.2 : -2, 2),
            b:
              op === 'pow'
                ? fc.array(fc.constantFrom(-2, -1, 0, 0.5, 1, 2, 3), {
                    minLength: sizeOf(sb),
                    maxLength: sizeOf(sb),
                  })
                : f32Values(sizeOf(sb)),
          }),
        );
      await property(
        device,
        arb,
        async ({ op, sa, sb, a, b }) => {
          const bv = op === 'div' ? b.map((v) => (Math.abs(v) < 0.1 ? 0.5 : v)) : b;
          await checkSame(
            device,
            (dev) => {
              const float = !['eq', 'ne', 'lt', 'le', 'gt', 'ge'].includes(op);
              const x = leaf(dev, sa, a, float);
              const y = leaf(dev, sb, bv, float);
              const out = (x as unknown as Record<BinaryOp, (o: Tensor) => Tensor>)[op](y);
              if (!float) return [out];
              weighted(
                out,
                Array.from({ length: out.size }, (_, i) => ((i * 7) % 5) - 2),
                dev,
              ).backward();
              return [out, ...grads(x, y)];
            },
            op === 'pow' ? { ...tol.elementwise, rtol: tol.elementwise.rtol * 10 } : tol.elementwise,
            `${op} [${sa}] [${sb}]`,
          );
        },
        runs * 3,
      );
    });

    test('int32 binary ops and pow with negative bases', async () => {
      const ops: BinaryOp[] = ['add', 'sub', 'mul', 'div', 'pow', 'maximum', 'minimum', 'lt', 'eq'];
      const intArr = (n: number, lo: number, hi: number) =>
        fc.array(fc.integer({ min: lo, max: hi }), { minLength: n, maxLength: n });
      await property(
        device,
        fc
          .tuple(fc.constantFrom(...ops), shapeArb({ minRank: 1, maxRank: 2, maxDim: 6 }))
          .chain(([op, shape]) =>
            fc.record({
              op: fc.constant(op),
              shape: fc.constant(shape),
              a: intArr(sizeOf(shape), -9, 9),
              b: intArr(sizeOf(shape), op === 'pow' ? -2 : -9, op === 'pow' ? 5 : 9),
            }),
          ),
        async ({ op, shape, a, b }) => {
          await checkSame(
            device,
            (dev) => {
              const x = ints(dev, shape, a);
              const y = ints(dev, shape, b);
              const out = TensorClass.empty(
                getBackend(dev),
                shape,
                ['lt', 'eq'].includes(op) ? 'bool' : 'int32',
              );
              getBackend(dev).kernels.binary(op, x, y, out);
              return [out];
            },
            tol.elementwise,
            `int32 ${op}`,
          );
        },
        runs,
      );
    });

    test('int32 ops at the extremes wrap as an Int32Array store does', async () => {
      // The CPU computes in doubles and stores with ToInt32, which wraps exactly while a result stays below
      // 2^53: products (mul, square) get operands up to 2^26, everything else the int32 extremes.
      const extremes = [-2147483648, 2147483647, -1, 0, 1, 46341, -65536, 3];
      const factors = [67108863, -67108864, 46341, -65536, 3, -1, 0];
      const intUnary: UnaryOp[] = ['neg', 'abs', 'sign', 'square', 'relu', 'step', 'logical_not'];
      const intBinary: BinaryOp[] = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'lt', 'eq'];
      const valuesFor = (op: string) => (op === 'mul' || op === 'square' ? factors : extremes);
      await checkSame(
        device,
        (dev) => {
          const unaries = intUnary.map((op) => {
            const values = valuesFor(op);
            const out = TensorClass.empty(getBackend(dev), [values.length], 'int32');
            getBackend(dev).kernels.unary(op, ints(dev, [values.length], values), out);
            return out;
          });
          const binaries = intBinary.map((op) => {
            const values = valuesFor(op);
            const k = values.length;
            const a = ints(dev, [k, 1], values).expand([k, k]);
            const b = ints(dev, [1, k], values).expand([k, k]);
            const out = TensorClass.empty(
              getBackend(dev),
              [k, k],
              ['lt', 'eq'].includes(op) ? 'bool' : 'int32',
            );
            getBackend(dev).kernels.binary(op, a, b, out);
            return out;
          });
          return [...unaries, ...binaries];
        },
        tol.elementwise,
        'int32 ops at the extremes',
      );
    });

    test('casts of special values: to int32 as an Int32Array stores them, to bool as x ≠ 0', async () => {
      // Int32Array: truncation toward zero, NaN and ±Infinity to 0, beyond ±2^31 modulo 2^32.
      const values = [
        0,
        -0,
        2.7,
        -2.7,
        0.5,
        -1e-30,
        2147483647,
        3e9,
        -3e9,
        1e20,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        Number.NaN,
      ];
      await checkSame(
        device,
        (dev) => {
          const x = leaf(dev, [values.length], values);
          return [cast(x, 'int32'), cast(x, 'bool')];
        },
        tol.elementwise,
        'casts of special values',
      );
    });

    test('where, casts and copies of permuted, sliced and concatenated views', async () => {
      await property(
        device,
        shaped({ minRank: 2, maxRank: 3, maxDim: 5 }),
        async (s) => {
          await checkSame(
            device,
            (dev) => {
              const x = leaf(dev, s.shape, s.x, true);
              const y = leaf(dev, s.shape, s.w, true);
              const picked = where(x.gt(y), x, y.mul(2));
              const perm = permute(x, [...s.shape.keys()].reverse()).contiguous();
              const sl = slice(x, 0, 0, Math.max(1, s.shape[0] - 1)).contiguous();
              const both = concat([x, y], -1);
              const asInt = cast(x.mul(3), 'int32');
              const asBool = cast(x, 'bool');
              const back = cast(asInt, 'float32');
              weighted(picked, s.w, dev)
                .add(sum(both.mul(both)))
                .backward();
              return [picked, perm, sl, both, asInt, asBool, back, ...grads(x, y)];
            },
            tol.elementwise,
            `where/copy [${s.shape}]`,
          );
        },
        runs,
      );
    });
  });
}

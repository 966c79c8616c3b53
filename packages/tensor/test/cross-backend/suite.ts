/**
 * The cross-backend property suite: every primitive, through the Tensor API (and, for the unary table, the
 * kernel itself), on random shapes (size 1, odd sizes, sizes off any tile, strided and broadcast views) and
 * random values; the device's forward results and gradients must match the CPU reference within the
 * tolerances a device declares. Generic over the device name, so each GPU backend reuses it.
 */
import fc from 'fast-check';
import { describe, test } from 'vitest';
import {
  BINARY_OPS,
  type BinaryOp,
  type Tensor,
  UNARY_OPS,
  type UnaryOp,
  adamwUpdate,
  argmax,
  argmin,
  cast,
  concat,
  crossEntropy,
  embedding,
  gather,
  getBackend,
  layerNorm,
  logSoftmax,
  logprobs,
  matmul,
  max,
  mean,
  min,
  normal,
  permute,
  randint,
  rmsNorm,
  scaledDotProductAttention,
  scatterAdd,
  slice,
  softmax,
  sum,
  tensor,
  transpose,
  uniform,
  Generator,
  where,
  Tensor as TensorClass,
} from '../../src/index.js';
import { broadcastPairArb, shapeArb } from '../../src/testing/index.js';
import { type Tolerance, checkSame, f32Values, ints, leaf, property, sizeOf } from './compare.js';

export type Family = 'elementwise' | 'reductions' | 'matmul' | 'indexing' | 'fused' | 'long loops' | 'random';

export interface SuiteOptions {
  /** Property runs per test (keep modest on software GPUs). */
  runs: number;
  /**
   * Only these families, e.g. to rerun matmul on a second kernel variant. Default: all but 'long loops'
   * (fixed large cases, costly on emulators; WebGPU opts in for llvmpipe's loop limit).
   */
  families?: Family[];
  tolerances: {
    elementwise: Tolerance;
    reduce: Tolerance;
    /** Per unit of K (the reduction length): atol = matmul.atol·K. */
    matmul: Tolerance;
    softmax: Tolerance;
    norm: Tolerance;
    attention: Tolerance;
    optim: Tolerance;
    /** uniform and randint (randint is compared exactly, being int32). */
    random: Tolerance;
    /** normal: Box–Muller through the device's f32 log/cos; log(u) near u = 1 loses relative precision. */
    normal: Tolerance;
  };
}

/** Sum of out·w for a fixed random w: a scalar whose gradient reaches every output element differently. */
function weighted(out: Tensor, w: readonly number[], device: string): Tensor {
  return sum(out.mul(tensor(Float32Array.from(w), { device, shape: out.shape })));
}

function grads(...xs: Tensor[]): Tensor[] {
  return xs.map((x) => x.grad!.clone());
}

/** A shape plus values for it (and a second vector of weights for backward). */
function shaped(s: Parameters<typeof shapeArb>[0], min = -2, max = 2) {
  return shapeArb(s).chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      x: f32Values(sizeOf(shape), min, max),
      w: f32Values(sizeOf(shape)),
    }),
  );
}

/** A dimension drawn to hit 1, tile edges (63/64/65) and odd sizes. */
const dimArb = (maxDim: number) =>
  fc.oneof(
    fc.constantFrom(...[1, 2, 3, 63, 64, 65].filter((d) => d <= maxDim)),
    fc.integer({ min: 1, max: maxDim }),
  );

const POSITIVE_ONLY = new Set<UnaryOp>(['log', 'sqrt', 'rsqrt', 'reciprocal']);

export function crossBackendSuite(device: string, options: SuiteOptions): void {
  const { runs, tolerances: tol } = options;
  const family = (name: Family, body: () => void) => {
    const selected = options.families ? options.families.includes(name) : name !== 'long loops';
    if (selected) describe(`${device} vs cpu: ${name}`, body);
  };
  const kernels = () => getBackend(device).kernels;

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

  family('reductions', () => {
    test('sum, mean, max, min, argmax, argmin over random axes; gradients', async () => {
      const arb = shaped({ minRank: 1, maxRank: 4, maxDim: 6 }).chain((s) =>
        fc.record({
          s: fc.constant(s),
          axes: fc.subarray([...s.shape.keys()], { minLength: 1 }),
          keepdim: fc.boolean(),
        }),
      );
      await property(
        device,
        arb,
        async ({ s, axes, keepdim }) => {
          await checkSame(
            device,
            (dev) => {
              const x = leaf(dev, s.shape, s.x, true);
              const xt = x.rank >= 2 ? transpose(x, 0, 1) : x;
              const ax = axes;
              const outs = [
                sum(xt, ax, keepdim),
                mean(xt, ax, keepdim),
                max(xt, ax, keepdim),
                min(xt, ax, keepdim),
              ];
              const loss = outs.reduce((acc, o, k) => acc.add(sum(o.mul(k + 1))), sum(xt.mul(0)));
              loss.backward();
              return [...outs, argmax(xt, ax[0], keepdim), argmin(xt, ax[0], keepdim), ...grads(x)];
            },
            tol.reduce,
            `reduce [${s.shape}] axes [${axes}]`,
          );
        },
        runs * 2,
      );
    });

    test('long reductions and many short ones', async () => {
      await property(
        device,
        fc
          .tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 500, max: 3000 }))
          .chain(([rows, n]) =>
            fc.record({ rows: fc.constant(rows), n: fc.constant(n), x: f32Values(rows * n, -1, 1) }),
          ),
        async ({ rows, n, x }) => {
          await checkSame(
            device,
            (dev) => {
              const t = leaf(dev, [rows, n], x);
              return [sum(t, 1), sum(t, 0), max(t), argmax(t, 1), sum(t)];
            },
            { atol: tol.reduce.atol * 10, rtol: tol.reduce.rtol },
            `long reduce [${rows}, ${n}]`,
          );
        },
        Math.max(3, runs / 3),
      );
    });
  });

  family('matmul', () => {
    test('batched, broadcast and transposed operands; gradients', async () => {
      const arb = fc
        .record({
          M: dimArb(70),
          N: dimArb(70),
          K: dimArb(70),
          batch: fc.constantFrom([], [1], [2], [3, 1]),
          ta: fc.boolean(),
          tb: fc.boolean(),
          bcast: fc.boolean(),
        })
        .chain((p) => {
          const aShape = [...p.batch, p.M, p.K];
          const bShape = [...(p.bcast ? [] : p.batch), p.K, p.N];
          return fc.record({
            p: fc.constant(p),
            a: f32Values(sizeOf(aShape), -1, 1),
            b: f32Values(sizeOf(bShape), -1, 1),
            w: f32Values(sizeOf([...p.batch, p.M, p.N])),
          });
        });
      await property(
        device,
        arb,
        async ({ p, a, b, w }) => {
          const aShape = [...p.batch, p.M, p.K];
          const bShape = [...(p.bcast ? [] : p.batch), p.K, p.N];
          await checkSame(
            device,
            (dev) => {
              // Transposed operands: store the transpose and view it back, so the kernel sees swapped strides.
              const mk = (shape: number[], vals: number[], t: boolean) => {
                const x = leaf(dev, shape, vals, true);
                if (!t) return [x, x];
                const r = shape.length;
                const stored = transpose(x.detach(), r - 2, r - 1).contiguous();
                stored.requiresGrad = true;
                return [stored, transpose(stored, r - 2, r - 1)];
              };
              const [la, va] = mk(aShape, a, p.ta);
              const [lb, vb] = mk(bShape, b, p.tb);
              const out = matmul(va, vb);
              weighted(out, w, dev).backward();
              return [out, ...grads(la, lb)];
            },
            { atol: tol.matmul.atol * Math.max(p.K, p.M, p.N), rtol: tol.matmul.rtol },
            `matmul ${JSON.stringify(p)}`,
          );
        },
        runs * 2,
      );
    });
  });

  family('indexing', () => {
    test('gather and embedding with repeated ids; scatterAdd; gradients', async () => {
      const arb = fc
        .record({ V: dimArb(40), D: fc.integer({ min: 1, max: 9 }), N: fc.integer({ min: 1, max: 50 }) })
        .chain((p) =>
          fc.record({
            p: fc.constant(p),
            w: f32Values(p.V * p.D),
            ids: fc.array(fc.integer({ min: 0, max: p.V - 1 }), { minLength: p.N, maxLength: p.N }),
            g: f32Values(p.N * p.D),
          }),
        );
      await property(
        device,
        arb,
        async ({ p, w, ids, g }) => {
          await checkSame(
            device,
            (dev) => {
              const weight = leaf(dev, [p.V, p.D], w, true);
              const idx = ints(dev, [p.N], ids);
              const e = embedding(weight, idx);
              const colIdx = ints(
                dev,
                [p.V, 1],
                Array.from({ length: p.V }, (_, i) => (i * 5) % p.D),
              );
              const gathered = gather(weight, 1, colIdx);
              const scattered = scatterAdd(
                leaf(dev, [p.V, p.D], w),
                0,
                ints(
                  dev,
                  [p.N, p.D],
                  ids.flatMap((id) => Array(p.D).fill(id)),
                ),
                leaf(dev, [p.N, p.D], g),
              );
              weighted(e, g, dev)
                .add(sum(gathered.mul(3)))
                .backward();
              return [e, gathered, scattered, ...grads(weight)];
            },
            tol.reduce,
            `indexing ${JSON.stringify(p)}`,
          );
        },
        runs,
      );
    });
  });

  family('fused', () => {
    test('softmax, log_softmax, logprobs and cross-entropy: forward and backward', async () => {
      const arb = fc
        .record({ rows: dimArb(9), V: fc.oneof(dimArb(70), fc.integer({ min: 1000, max: 2100 })) })
        .chain((p) =>
          fc.record({
            p: fc.constant(p),
            x: f32Values(p.rows * p.V, -6, 6),
            w: f32Values(p.rows * p.V),
            t: fc.array(fc.integer({ min: 0, max: p.V - 1 }), { minLength: p.rows, maxLength: p.rows }),
          }),
        );
      await property(
        device,
        arb,
        async ({ p, x, w, t }) => {
          await checkSame(
            device,
            (dev) => {
              const a = leaf(dev, [p.rows, p.V], x, true);
              const targets = ints(dev, [p.rows], t);
              const sm = softmax(a, -1);
              const lsm = logSoftmax(a, -1);
              const lp = logprobs(a, targets);
              const ce = crossEntropy(a, targets);
              weighted(sm, w, dev)
                .add(weighted(lsm, w, dev).mul(0.5))
                .add(sum(lp.mul(lp)))
                .add(ce)
                .backward();
              return [sm, lsm, lp, ce, ...grads(a)];
            },
            tol.softmax,
            `softmax family [${p.rows}, ${p.V}]`,
          );
        },
        runs,
      );
    });

    test('layer_norm and rms_norm with and without affine parameters: forward and backward', async () => {
      const arb = fc
        .record({
          rows: dimArb(8),
          D: fc.oneof(dimArb(70), fc.constant(1500)),
          affine: fc.boolean(),
          bias: fc.boolean(),
        })
        .chain((p) =>
          fc.record({
            p: fc.constant(p),
            x: f32Values(p.rows * p.D),
            wt: f32Values(p.D, 0.5, 1.5),
            b: f32Values(p.D),
            g: f32Values(p.rows * p.D),
          }),
        );
      await property(
        device,
        arb,
        async ({ p, x, wt, b, g }) => {
          await checkSame(
            device,
            (dev) => {
              const xs = leaf(dev, [p.rows, p.D], x, true);
              const weight = p.affine ? leaf(dev, [p.D], wt, true) : null;
              const bias = p.bias ? leaf(dev, [p.D], b, true) : null;
              const ln = layerNorm(xs, weight, bias);
              const rn = rmsNorm(xs, weight);
              weighted(ln, g, dev)
                .add(weighted(rn, g, dev).mul(0.7))
                .backward();
              return [ln, rn, ...grads(xs, ...(weight ? [weight] : []), ...(bias ? [bias] : []))];
            },
            tol.norm,
            `norms ${JSON.stringify(p)}`,
          );
        },
        runs,
      );
    });

    test('attention (causal, masked, grouped-query, T ≠ S): forward and backward', async () => {
      const arb = fc
        .record({
          B: fc.integer({ min: 1, max: 2 }),
          Hkv: fc.integer({ min: 1, max: 2 }),
          group: fc.integer({ min: 1, max: 2 }),
          T: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 70 })),
          extra: fc.integer({ min: 0, max: 5 }),
          D: fc.constantFrom(1, 3, 8, 16, 33),
          causal: fc.boolean(),
          masked: fc.boolean(),
        })
        .chain((p) => {
          const S = p.T + p.extra;
          const H = p.Hkv * p.group;
          return fc.record({
            p: fc.constant({ ...p, S, H }),
            q: f32Values(p.B * H * p.T * p.D, -1, 1),
            k: f32Values(p.B * p.Hkv * S * p.D, -1, 1),
            v: f32Values(p.B * p.Hkv * S * p.D, -1, 1),
            g: f32Values(p.B * H * p.T * p.D),
            mask: fc.array(fc.boolean(), { minLength: p.T * S, maxLength: p.T * S }),
          });
        });
      await property(
        device,
        arb,
        async ({ p, q, k, v, g, mask }) => {
          await checkSame(
            device,
            (dev) => {
              const tq = leaf(dev, [p.B, p.H, p.T, p.D], q, true);
              const tk = leaf(dev, [p.B, p.Hkv, p.S, p.D], k, true);
              const tv = leaf(dev, [p.B, p.Hkv, p.S, p.D], v, true);
              const m = p.masked
                ? tensor(Uint8Array.from(mask, Number), { device: dev, shape: [p.T, p.S], dtype: 'bool' })
                : null;
              const out = scaledDotProductAttention(tq, tk, tv, { causal: p.causal, mask: m });
              weighted(out, g, dev).backward();
              return [out, ...grads(tq, tk, tv)];
            },
            tol.attention,
            `attention ${JSON.stringify(p)}`,
          );
        },
        runs,
      );
    });

    test('AdamW: three steps in place', async () => {
      const arb = fc.integer({ min: 1, max: 300 }).chain((n) =>
        fc.record({
          n: fc.constant(n),
          p: f32Values(n),
          g: fc.array(f32Values(n), { minLength: 3, maxLength: 3 }),
        }),
      );
      await property(
        device,
        arb,
        async ({ n, p, g }) => {
          await checkSame(
            device,
            (dev) => {
              const param = leaf(dev, [n], p);
              const m = leaf(dev, [n], new Array(n).fill(0));
              const v = leaf(dev, [n], new Array(n).fill(0));
              g.forEach((gs, step) => {
                adamwUpdate(param, leaf(dev, [n], gs), m, v, { lr: 0.01, weightDecay: 0.1, step: step + 1 });
              });
              return [param, m, v];
            },
            tol.optim,
            `adamw [${n}]`,
          );
        },
        runs,
      );
    });
  });

  family('long loops', () => {
    // Sizes past 65535 iterations of one loop in one invocation (Mesa's llvmpipe cuts such loops short, with
    // no error): kernels must split the work into passes. Fixed cases, as each is costly on a software GPU.
    test('matmul with K = 70000 (tiled and matrix-vector); attention in several passes, and decoding', async () => {
      const K = 70000;
      const vals = (n: number, seed: number) =>
        Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i * 0.37 + seed)));
      await checkSame(
        device,
        (dev) => [
          matmul(leaf(dev, [2, K], vals(2 * K, 1)), leaf(dev, [K, 3], vals(3 * K, 2))),
          matmul(leaf(dev, [1, K], vals(K, 3)), leaf(dev, [K, 5], vals(5 * K, 4))),
        ],
        { atol: tol.matmul.atol * K, rtol: tol.matmul.rtol },
        `matmul K ${K}`,
      );
      const [B, H, Hkv, T, S, D] = [1, 2, 1, 150, 260, 40];
      await checkSame(
        device,
        (dev) => {
          const q = leaf(dev, [B, H, T, D], vals(B * H * T * D, 5), true);
          const k = leaf(dev, [B, Hkv, S, D], vals(B * Hkv * S * D, 6), true);
          const v = leaf(dev, [B, Hkv, S, D], vals(B * Hkv * S * D, 7), true);
          const out = scaledDotProductAttention(q, k, v, { causal: true });
          weighted(out, vals(out.size, 8), dev).backward();
          return [out, ...grads(q, k, v)];
        },
        tol.attention,
        'attention in several passes',
      );
      // Decoding: one query per head against a long KV cache (the keys are split across threads).
      await checkSame(
        device,
        (dev) => {
          const [Hq, Sk, Dk] = [4, 700, 24];
          const q = leaf(dev, [2, Hq, 1, Dk], vals(2 * Hq * Dk, 9));
          const k = leaf(dev, [2, 2, Sk, Dk], vals(2 * 2 * Sk * Dk, 10));
          const v = leaf(dev, [2, 2, Sk, Dk], vals(2 * 2 * Sk * Dk, 11));
          const keep = Uint8Array.from({ length: Sk }, (_, j) => (j % 7 === 3 ? 0 : 1));
          const mask = tensor(keep, { device: dev, shape: [1, 1, 1, Sk], dtype: 'bool' });
          return [scaledDotProductAttention(q, k, v, { causal: true, mask })];
        },
        tol.attention,
        'attention decode',
      );
    });

    test('layer_norm weight gradient summed over 70000 rows', async () => {
      const R = 70000;
      await checkSame(
        device,
        (dev) => {
          const x = leaf(
            dev,
            [R, 2],
            Array.from({ length: 2 * R }, (_, i) => Math.fround(Math.cos(i * 0.11))),
          );
          const w = leaf(dev, [2], [0.5, 1.5], true);
          const b = leaf(dev, [2], [0.1, -0.2], true);
          sum(layerNorm(x, w, b).mul(x)).backward();
          return grads(w, b);
        },
        { atol: tol.reduce.atol * 100, rtol: tol.reduce.rtol * 10 },
        'layer_norm dweight over many rows',
      );
    });
  });

  family('random', () => {
    test('uniform, normal and randint draw the same numbers from a seed', async () => {
      await property(
        device,
        fc.record({
          seed: fc.integer({ min: 0, max: 2 ** 40 }),
          skip: fc.integer({ min: 0, max: 2 ** 33 }),
          n: fc.integer({ min: 1, max: 700 }),
        }),
        async ({ seed, skip, n }) => {
          await checkSame(
            device,
            (dev) => {
              const gen = new Generator(seed);
              // A counter beyond 2^32 exercises the carry into the high word.
              gen.position = skip;
              return [
                uniform([n], -3, 5, { device: dev, generator: gen }),
                randint(-5, 1000, [n], { device: dev, generator: gen }),
              ];
            },
            tol.random,
            `random seed ${seed} counter ${skip}`,
          );
          await checkSame(
            device,
            (dev) => {
              const gen = new Generator(seed);
              gen.position = skip;
              return [normal([n], 1, 2, { device: dev, generator: gen })];
            },
            tol.normal,
            `normal seed ${seed} counter ${skip}`,
          );
        },
        runs,
      );
    });
  });

  void kernels;
}

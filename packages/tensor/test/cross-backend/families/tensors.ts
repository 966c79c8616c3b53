/** Reductions over random axes, batched/transposed matmul, gather / embedding / scatterAdd. */
import fc from 'fast-check';
import { test } from 'vitest';
import {
  argmax,
  argmin,
  embedding,
  gather,
  matmul,
  max,
  mean,
  min,
  scatterAdd,
  sum,
  transpose,
} from '../../../src/index.js';
import { checkSame, f32Values, ints, leaf, property, sizeOf } from '../compare.js';
import { dimArb, grads, shaped, weighted } from '../helpers.js';
import type { Family, SuiteOptions } from '../options.js';

export function familiesTensors(
  device: string,
  options: SuiteOptions,
  family: (name: Family, body: () => void) => void,
): void {
  const { runs, tolerances: tol } = options;
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

    test('NaN, ±Infinity, ±0 and ties: every reduction answers as the CPU does', async () => {
      const nan = Number.NaN;
      const inf = Number.POSITIVE_INFINITY;
      // Rows of 5: a NaN first (argmax/argmin keep it, max/min give NaN), a NaN later (arg-reductions skip
      // it), all NaN, ties (the first index wins), infinities, signed zeros. Long rows too (the GPUs'
      // workgroup and warp combines), with the NaN or the tie far from index 0.
      const short = [
        [nan, 1, 2, 3, 0],
        [1, nan, 5, 5, -2],
        [nan, nan, nan, nan, nan],
        [2, 7, 7, -1, -1],
        [-inf, -inf, inf, 3, inf],
        [0, -0, 0, -0, 0],
      ];
      const long = Array.from({ length: 3 }, (_, r) =>
        Array.from({ length: 700 }, (_, j) => (j === 0 && r === 0 ? nan : j === 350 + r ? 9 : j % 7)),
      );
      for (const rows of [short, long]) {
        await checkSame(
          device,
          (dev) => {
            const t = leaf(dev, [rows.length, rows[0].length], rows.flat());
            return [sum(t, 1), max(t, 1), min(t, 1), argmax(t, 1), argmin(t, 1)];
          },
          tol.reduce,
          `reductions of special values [${rows.length}, ${rows[0].length}]`,
        );
      }
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
}

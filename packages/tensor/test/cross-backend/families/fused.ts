/** Softmax family and logprobs, layer/RMS norm, attention, rotary embedding, AdamW: forward and backward. */
import fc from 'fast-check';
import { test } from 'vitest';
import {
  adamwUpdate,
  crossEntropy,
  layerNorm,
  logSoftmax,
  logprobs,
  narrow,
  noGrad,
  rmsNorm,
  rotaryEmbedding,
  scaledDotProductAttention,
  softmax,
  sum,
  tensor,
} from '../../../src/index.js';
import { checkSame, f32Values, ints, leaf, property } from '../compare.js';
import { dimArb, grads, weighted } from '../helpers.js';
import type { Family, SuiteOptions } from '../options.js';

export function familiesFused(
  device: string,
  options: SuiteOptions,
  family: (name: Family, body: () => void) => void,
): void {
  const { runs, tolerances: tol } = options;
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

    test('softmax family over masked (-inf) entries and fully masked rows; widths and offsets 4-aligned or not', async () => {
      for (const W of [7, 8, 1028])
        for (const offset of [0, 1, 4]) {
          const rows = 5;
          const values = Array.from({ length: offset + rows * W }, (_, i) =>
            i % 5 === 3 ? Number.NEGATIVE_INFINITY : Math.sin(i) * 4,
          );
          for (let j = 0; j < W; j++) values[offset + 2 * W + j] = Number.NEGATIVE_INFINITY;
          await checkSame(
            device,
            (dev) => {
              const x = narrow(leaf(dev, [values.length], values), 0, offset, rows * W).reshape([rows, W]);
              const targets = ints(
                dev,
                [rows],
                Array.from({ length: rows }, (_, r) => (r * 3) % W),
              );
              return [softmax(x, -1), logSoftmax(x, -1), logprobs(x, targets)];
            },
            tol.softmax,
            `masked softmax family [${rows}, ${W}] at offset ${offset}`,
          );
        }
    });

    test('softmax family and norms on constant, zero, tiny and large rows', async () => {
      // Not NaN or ±Infinity: WGSL lets a shader compiler assume its floats are finite (docs/architecture.md).
      const rows = [
        [3, 3, 3, 3],
        [0, 0, 0, 0],
        [1e15, -1e15, 0, 1],
        [-1e-30, 1e-30, 0, 0],
        [88, -88, 87.5, -1e4],
      ];
      await checkSame(
        device,
        (dev) => {
          const x = leaf(dev, [rows.length, 4], rows.flat());
          const targets = ints(dev, [rows.length], [0, 1, 2, 3, 0]);
          const w = leaf(dev, [4], [1, 2, 0.5, -1]);
          return [
            softmax(x, -1),
            logSoftmax(x, -1),
            logprobs(x, targets),
            layerNorm(x, w, null, 1e-5),
            rmsNorm(x, w, 1e-6),
          ];
        },
        tol.softmax,
        'softmax family and norms on special rows',
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

    test("attention without gradients reads K and V in place from a KV cache's view (prefix mask or causal)", async () => {
      const arb = fc
        .record({
          B: fc.integer({ min: 1, max: 3 }),
          Hkv: fc.integer({ min: 1, max: 2 }),
          group: fc.integer({ min: 1, max: 2 }),
          T: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 9 })),
          S: fc.integer({ min: 1, max: 40 }),
          spare: fc.integer({ min: 1, max: 24 }),
          D: fc.constantFrom(4, 8, 16, 33),
        })
        .chain((p) => {
          const H = p.Hkv * p.group;
          const capacity = p.S + p.spare;
          return fc.record({
            p: fc.constant({ ...p, H, capacity }),
            q: f32Values(p.B * H * p.T * p.D, -1, 1),
            k: f32Values(p.B * p.Hkv * capacity * p.D, -1, 1),
            v: f32Values(p.B * p.Hkv * capacity * p.D, -1, 1),
            kept: fc.array(fc.integer({ min: 1, max: p.S }), { minLength: p.B, maxLength: p.B }),
          });
        });
      await property(
        device,
        arb,
        async ({ p, q, k, v, kept }) => {
          await checkSame(
            device,
            (dev) =>
              noGrad(() => {
                // The cache holds `capacity` positions per head; attention reads the first S of them.
                const cache = (values: number[]) =>
                  leaf(dev, [p.B, p.Hkv, p.capacity, p.D], values).narrow(2, 0, p.S);
                const tq = leaf(dev, [p.B, p.H, p.T, p.D], q);
                // Each batch row keeps a prefix of its keys, as a padded batch of caches does.
                const keep = Uint8Array.from({ length: p.B * p.S }, (_, e) =>
                  Number(e % p.S < kept[Math.floor(e / p.S)]),
                );
                const mask = tensor(keep, { device: dev, shape: [p.B, 1, 1, p.S], dtype: 'bool' });
                const causal = scaledDotProductAttention(tq, cache(k), cache(v), { causal: p.T <= p.S });
                const prefix = scaledDotProductAttention(tq, cache(k), cache(v), { mask });
                return [causal, prefix];
              }),
            tol.attention,
            `attention over a cache view ${JSON.stringify(p)}`,
          );
        },
        runs,
      );
    });

    test('rotary embedding (angle tables per batch row or shared): forward and backward', async () => {
      const arb = fc
        .record({ B: dimArb(2), H: dimArb(3), T: dimArb(9), half: dimArb(8), shared: fc.boolean() })
        .chain((p) => {
          const n = p.B * p.H * p.T * 2 * p.half;
          const tables = (p.shared ? 1 : p.B) * p.T * 2 * p.half;
          return fc.record({
            p: fc.constant(p),
            x: f32Values(n),
            c: f32Values(tables, -1, 1),
            s: f32Values(tables, -1, 1),
            w: f32Values(n),
          });
        });
      await property(
        device,
        arb,
        async ({ p, x, c, s, w }) => {
          const D = 2 * p.half;
          await checkSame(
            device,
            (dev) => {
              const a = leaf(dev, [p.B, p.H, p.T, D], x, true);
              const table = [p.shared ? 1 : p.B, 1, p.T, D];
              const out = rotaryEmbedding(a, leaf(dev, table, c), leaf(dev, table, s));
              weighted(out, w, dev).backward();
              return [out, ...grads(a)];
            },
            tol.elementwise,
            `rotary [${p.B}, ${p.H}, ${p.T}, ${D}]`,
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
}

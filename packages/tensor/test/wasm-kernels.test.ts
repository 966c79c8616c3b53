/**
 * The cross-backend property suite for the wasm kernels added beside matmul/softmax/logprobs (those are in
 * wasm.test.ts): every primitive the fast path replaces, on random shapes (odd sizes, sizes off the 4-lane
 * grid and off the 1024-element chunk, size 1, empty where legal), forward and backward through autograd,
 * against the plain TypeScript kernels.
 *
 * Stated tolerances (float32 kernels against the TS kernels, which compute in float64 and round):
 * - add, sub, mul: bitwise equal (a float32 op on float32 inputs rounds the exact result once, as the TS
 *   kernel's double result rounded to float32 does); div: 1 ulp (2.4e-7 relative).
 * - exp, sigmoid, silu: 4e-7 relative + 1e-37 absolute (the exp polynomial is ≈1 ulp; subnormals flush);
 *   gelu and the silu/gelu gradients: 2e-6 absolute + 2e-6 relative (a few float32 roundings of O(1) terms).
 * - softmax backward, log-softmax backward, logprobs backward: 1e-6 absolute + 1e-5 relative.
 * - layer/RMS norm: outputs and dx 2e-5·(1 + |x|) absolute; dweight/dbias sum N rows: 2e-6·N + 1e-5 relative.
 * - attention: 2e-6 absolute + 1e-5 relative on the output; dq, dk, dv 1e-5 absolute + 1e-4 relative.
 * - AdamW: 1e-6 relative + 1e-7 absolute (a few float32 ulps of an lr = 1e-2 update) on param, m and v
 *   after 3 steps.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type Tensor,
  add,
  adamwUpdate,
  div,
  exp,
  full,
  gelu,
  getBackend,
  layerNorm,
  logSoftmax,
  logprobs,
  mul,
  rmsNorm,
  scaledDotProductAttention,
  sigmoid,
  silu,
  slice,
  softmax,
  sub,
  tensor,
  tidy,
  transpose,
  zeros,
} from '../src/index.js';
import { WASM_KERNELS, disableWasmKernels, wasmSimdSupported } from '../src/backend/wasm/index.js';
import { prefixKeyLimits } from '../src/backend/wasm/attention.js';
import { MIN_ELEMENTWISE } from '../src/backend/wasm/elementwise.js';
import { getWasmRuntime } from '../src/backend/wasm/runtime.js';
import type { CpuStorage } from '../src/backend/cpu/storage.js';
import { expectClose, expectIdentical, f32, leaf, values, withWasm } from './wasm-helpers.js';

const RUNS = { numRuns: 25 };
const dim = (max: number) => fc.integer({ min: 1, max });

/** Runs the same op with and without the wasm kernels; returns [wasm, ts]. */
function both<T>(fn: () => T): [T, T] {
  return [withWasm(true, fn), withWasm(false, fn)];
}

/** Gradients of sum(f(inputs) · cotangent) w.r.t. each input, with the wasm kernels on or off. */
function grads(on: boolean, f: (...xs: Tensor[]) => Tensor, inputs: Tensor[], seed = 99): Tensor[] {
  return withWasm(on, () => {
    const leaves = inputs.map(leaf);
    const y = f(...leaves);
    y.mul(f32(y.shape, seed)).sum().backward();
    return leaves.map((l) => l.grad as Tensor);
  });
}

/**
 * Attention over random q [B, H, T, D], k and v [B, Hkv, S, D] with `options`: the wasm output and gradients
 * against the TypeScript kernels' (tolerances in the header).
 */
function expectAttentionMatches(
  [B, H, Hkv, T, S, D]: number[],
  seed: number,
  options: Parameters<typeof scaledDotProductAttention>[3],
): void {
  tidy(() => {
    const q = f32([B, H, T, D], seed, 2);
    const k = f32([B, Hkv, S, D], seed + 1, 2);
    const v = f32([B, Hkv, S, D], seed + 2, 2);
    const f = (a: Tensor, b: Tensor, c: Tensor) => scaledDotProductAttention(a, b, c, options);
    const [got, want] = both(() => f(q, k, v));
    expectClose(got, want, 2e-6, 1e-5, 'out');
    const g = grads(true, f, [q, k, v]);
    const e = grads(false, f, [q, k, v]);
    for (let i = 0; i < 3; i++) expectClose(g[i], e[i], 1e-5, 1e-4, `d${'qkv'[i]}`);
  });
}

describe.skipIf(!wasmSimdSupported())('wasm kernels vs the TypeScript kernels (property suite)', () => {
  const kernels = getBackend('cpu').kernels;
  const original = { ...kernels };
  beforeAll(() => disableWasmKernels());
  afterAll(() => {
    disableWasmKernels();
    for (const name of Object.keys(WASM_KERNELS) as (keyof typeof WASM_KERNELS)[])
      expect(kernels[name]).toBe(original[name]);
  });

  // Enough rows that the elementwise fast path (≥ MIN_ELEMENTWISE elements) is taken most of the time.
  const bigShape = fc.tuple(fc.integer({ min: 1, max: 160 }), dim(70)).map(([r, c]) => {
    const rows = Math.max(r, Math.ceil(MIN_ELEMENTWISE / c) + (r % 7));
    return [rows, c];
  });

  test('binary add/sub/mul/div: dense, bias along the last axis, scalar, either side', () => {
    fc.assert(
      fc.property(
        bigShape,
        fc.constantFrom('dense', 'row', 'scalar', 'col'),
        fc.boolean(),
        fc.nat(),
        ([R, C], kind, swap, seed) =>
          tidy(() => {
            const a = f32([R, C], seed, 4);
            const bShape =
              kind === 'dense' ? [R, C] : kind === 'row' ? [C] : kind === 'scalar' ? [1] : [R, 1];
            // Divisors away from 0 so the relative bound is meaningful.
            const b = f32(bShape, seed + 1, 2)
              .abs()
              .add(0.25);
            const [x, y] = swap ? [b, a] : [a, b];
            for (const [op, exact] of [
              [add, true],
              [sub, true],
              [mul, true],
              [div, false],
            ] as const) {
              const [got, want] = both(() => op(x, y));
              if (exact) expectIdentical(got, want, op.name);
              else expectClose(got, want, 0, 2.4e-7, op.name);
            }
          }),
      ),
      RUNS,
    );
  });

  test('binary ops: sizes just above and below the fast-path threshold, tails off the chunk and lane grid', () => {
    tidy(() => {
      for (const n of [MIN_ELEMENTWISE - 1, MIN_ELEMENTWISE, MIN_ELEMENTWISE + 3, 1024 * 7 + 5, 20001]) {
        const a = f32([n], n, 3);
        const b = f32([n], n + 1, 3);
        for (const op of [add, sub, mul]) {
          const [got, want] = both(() => op(a, b));
          expectIdentical(got, want, `${op.name} n=${n}`);
        }
      }
      // Empty and size-1 tensors (the TS path) still work with the kernels registered.
      const [e] = both(() => add(tensor(new Float32Array(0), { shape: [0, 3] }), f32([3], 1)));
      expect(e.shape).toEqual([0, 3]);
    });
  });

  test('unary exp, sigmoid, silu, gelu, with special values', () => {
    fc.assert(
      fc.property(bigShape, fc.double({ min: 0.5, max: 30, noNaN: true }), fc.nat(), ([R, C], scale, seed) =>
        tidy(() => {
          const data = values(R * C, seed, scale);
          const specials = [0, -0, 1e-8, -1e-8, 88, 89, -87, -90, -200, 200];
          specials.push(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN);
          specials.forEach((v, i) => {
            data[(i * 7919) % data.length] = v;
          });
          const x = tensor(data, { shape: [R, C] });
          for (const [op, atol, rtol] of [
            [exp, 1e-37, 4e-7],
            [sigmoid, 1e-37, 4e-7],
            [silu, 1e-37, 4e-7],
            [gelu, 2e-6, 2e-6],
          ] as const) {
            const [got, want] = both(() => op(x));
            expectClose(got, want, atol, rtol, op.name);
          }
        }),
      ),
      RUNS,
    );
  });

  test("unary neg, abs, sqrt, relu, step, square, reciprocal: the TypeScript kernels' values to the bit, specials included", () => {
    const ops = ['neg', 'abs', 'sqrt', 'relu', 'step', 'square', 'reciprocal'] as const;
    fc.assert(
      fc.property(bigShape, fc.nat(), ([R, C], seed) =>
        tidy(() => {
          const data = values(R * C, seed, 1e3);
          const specials = [0, -0, 1e-40, -1e-40, 3e38, -3e38, Number.POSITIVE_INFINITY, Number.NaN];
          specials.forEach((v, i) => {
            data[(i * 7919) % data.length] = v;
          });
          const x = tensor(data, { shape: [R, C] });
          const backend = () => getBackend('cpu').kernels;
          for (const op of ops) {
            const [got, want] = both(() => {
              const out = zeros([R, C]);
              backend().unary(op, x, out);
              return out;
            });
            // Every value to the bit, signed zeros included; a NaN's sign is not a value.
            const [g, w] = [got.dataSync(), want.dataSync()];
            for (let i = 0; i < w.length; i++)
              if (!Object.is(g[i], w[i]) && !(Number.isNaN(g[i]) && Number.isNaN(w[i])))
                throw new Error(`${op} element ${i} (${data[i]}): ${g[i]} vs ${w[i]}`);
          }
        }),
      ),
      { numRuns: 10 },
    );
  });

  test('unary backward: silu and gelu gradients (silu_grad, gelu_grad kernels) and exp', () => {
    fc.assert(
      fc.property(bigShape, fc.nat(), ([R, C], seed) =>
        tidy(() => {
          const x = f32([R, C], seed, 6);
          for (const op of [silu, gelu, exp]) {
            const [got] = grads(true, op, [x]);
            const [want] = grads(false, op, [x]);
            expectClose(got, want, 2e-6, 2e-6, `d${op.name}`);
          }
        }),
      ),
      { numRuns: 10 },
    );
  });

  test('softmax / log-softmax backward: random widths incl. 1 and off the lane grid', () => {
    fc.assert(
      fc.property(dim(40), dim(300), fc.nat(), (R, W, seed) =>
        tidy(() => {
          const x = f32([R, W], seed, 5);
          for (const op of [softmax, logSoftmax]) {
            const [got] = grads(true, (t) => op(t), [x]);
            const [want] = grads(false, (t) => op(t), [x]);
            expectClose(got, want, 1e-6, 1e-5, op.name);
          }
        }),
      ),
      RUNS,
    );
  });

  test('softmax, log-softmax and logprobs: a NaN makes its row NaN (as in the TS kernel), other rows unaffected', () => {
    tidy(() => {
      for (const W of [3, 8, 37, 1031]) {
        const data = values(5 * W, W, 4);
        data[W + (W >> 1)] = Number.NaN; // row 1
        data[3 * W + W - 1] = Number.NaN; // row 3, in the scalar tail when W is off the lane grid
        const x = tensor(data, { shape: [5, W] });
        for (const op of [softmax, logSoftmax]) {
          const [got, want] = both(() => op(x));
          expectClose(got, want, 1e-6, 1e-5, `${op.name} W=${W}`);
          expect(Number.isNaN(got.dataSync()[W])).toBe(true);
        }
        const targets = tensor(Int32Array.from([0, 1, 2, 0, 1]), { shape: [5] });
        const [got, want] = both(() => logprobs(x, targets));
        expectClose(got, want, 1e-6, 1e-5, `logprobs W=${W}`);
      }
    });
  });

  test('logprobs backward: random shapes', () => {
    fc.assert(
      fc.property(dim(30), dim(500), fc.nat(), (R, V, seed) =>
        tidy(() => {
          const logits = f32([R, V], seed, 8);
          const targets = tensor(
            Int32Array.from({ length: R }, (_, i) => (seed + i * 13) % V),
            { shape: [R] },
          );
          const f = (l: Tensor) => logprobs(l, targets);
          const [got] = grads(true, f, [logits]);
          const [want] = grads(false, f, [logits]);
          expectClose(got, want, 1e-6, 1e-5, 'dlogits');
        }),
      ),
      RUNS,
    );
  });

  test('layer norm and RMS norm, forward and backward, with and without weight and bias', () => {
    fc.assert(
      fc.property(
        dim(70),
        dim(90),
        fc.boolean(),
        fc.boolean(),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        fc.nat(),
        (N, D, withWeight, withBias, scale, seed) =>
          tidy(() => {
            const x = f32([N, D], seed, scale).add(f32([D], seed + 5, scale));
            const w = f32([D], seed + 1, 2);
            const b = f32([D], seed + 2, 1);
            const norms: [string, (...t: Tensor[]) => Tensor, Tensor[]][] = [
              [
                'layerNorm',
                (t, ...wb) =>
                  layerNorm(t, withWeight ? wb[0] : null, withBias ? wb[withWeight ? 1 : 0] : null),
                [x, ...(withWeight ? [w] : []), ...(withBias ? [b] : [])],
              ],
              ['rmsNorm', (t, ww) => rmsNorm(t, withWeight ? ww : null), [x, ...(withWeight ? [w] : [])]],
            ];
            const xmax = Math.max(...Array.from(x.abs().dataSync()));
            for (const [name, f, inputs] of norms) {
              const [got, want] = both(() => f(...inputs));
              expectClose(got, want, 2e-5 * (1 + xmax), 0, `${name} y`);
              const g = grads(true, f, inputs);
              const e = grads(false, f, inputs);
              expectClose(g[0], e[0], 2e-5 * (1 + xmax), 1e-5, `${name} dx`);
              for (let i = 1; i < inputs.length; i++)
                expectClose(g[i], e[i], 2e-6 * N * (1 + xmax), 1e-5, `${name} d${i}`);
            }
          }),
      ),
      RUNS,
    );
  });

  test('attention forward (causal or not, grouped-query heads, T ≠ S, fully masked rows) and backward', () => {
    fc.assert(
      fc.property(
        dim(2),
        fc.constantFrom([1, 1], [2, 1], [4, 2], [3, 3]),
        dim(20),
        dim(20),
        dim(19),
        fc.boolean(),
        fc.nat(),
        (B, [H, Hkv], T, S, D, causal, seed) =>
          expectAttentionMatches([B, H, Hkv, T, S, D], seed, { causal }),
      ),
      RUNS,
    );
  });

  test('attention with prefix keep-masks (a KV cache batch: per-row key counts, 0 included), forward and backward', () => {
    fc.assert(
      fc.property(
        dim(2),
        fc.constantFrom([1, 1], [2, 1], [4, 2]),
        dim(9),
        dim(20),
        dim(19),
        fc.boolean(),
        fc.boolean(),
        fc.nat(),
        (B, [H, Hkv], T, S, D, perHead, causal, seed) =>
          tidy(() => {
            const heads = perHead ? H : 1;
            const kept = Array.from({ length: B * heads * T }, (_, r) => (r * 7 + seed) % (S + 1));
            const mask = tensor(
              Array.from({ length: B * heads * T * S }, (_, i) => i % S < kept[Math.floor(i / S)]),
              { shape: [B, heads, T, S], dtype: 'bool' },
            );
            expectAttentionMatches([B, H, Hkv, T, S, D], seed, { causal, mask });
          }),
      ),
      RUNS,
    );
  });

  test('prefixKeyLimits reads key counts through broadcasts and refuses masks that are not prefixes', () => {
    tidy(() => {
      const rows = tensor([true, true, false, true, false, false, false, false, false], {
        shape: [3, 3],
        dtype: 'bool',
      });
      const view = (t: Tensor, shape: number[], strides: number[]) => ({
        storage: t.storage,
        dtype: t.dtype,
        offset: 0,
        shape,
        strides,
      });
      const limits = prefixKeyLimits(view(rows, [2, 2, 3, 3], [0, 0, 3, 1]));
      expect([...limits!]).toEqual([2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0]);
      const gap = tensor([true, false, true], { dtype: 'bool' });
      expect(prefixKeyLimits(view(gap, [1, 1, 1, 3], [0, 0, 0, 1]))).toBeNull();
      // Rows whose keys are not adjacent (every other element): the same answers.
      const everyOther = tensor([true, false, true, true, false, false, true, false], { dtype: 'bool' });
      expect([...prefixKeyLimits(view(everyOther, [1, 1, 1, 3], [0, 0, 0, 2]))!]).toEqual([2]);
      expect(prefixKeyLimits(view(everyOther, [1, 1, 1, 4], [0, 0, 0, 2]))).toBeNull();
    });
  });

  test('attention with a mask that is not a prefix falls back to the TypeScript kernel (bitwise equal)', () => {
    tidy(() => {
      const q = f32([1, 2, 5, 8], 1);
      const k = f32([1, 2, 7, 8], 2);
      const mask = tensor(
        Array.from({ length: 35 }, (_, i) => i % 3 !== 0),
        { shape: [5, 7], dtype: 'bool' },
      );
      const [got, want] = both(() => scaledDotProductAttention(q, k, k, { mask }));
      expectIdentical(got, want);
    });
  });

  test('AdamW: sizes around the threshold and off the lane grid, three steps', () => {
    for (const n of [MIN_ELEMENTWISE - 3, MIN_ELEMENTWISE + 1, 1024 * 9 + 7]) {
      const run = (on: boolean) =>
        withWasm(on, () => {
          const param = f32([n], n, 1);
          const m = tensor(new Float32Array(n));
          const v = tensor(new Float32Array(n));
          for (let step = 1; step <= 3; step++)
            adamwUpdate(param, f32([n], n + step, 0.1), m, v, { lr: 1e-2, weightDecay: 0.1, step });
          return [param, m, v];
        });
      const got = run(true);
      const want = run(false);
      for (let i = 0; i < 3; i++) expectClose(got[i], want[i], 1e-7, 1e-6, `adamw n=${n} #${i}`);
    }
  });

  /**
   * gradcheck on the fast path: float32 central differences (the wasm kernels are float32 only, so the
   * float64 gradcheck would test the TS fallback) at sampled elements, against the wasm backward. With
   * eps = 1e-2 the truncation error is O(eps²·f''') and the rounding error O(ε₃₂·|f|/eps): 2e-2 absolute
   * and relative covers both for these O(1) functions.
   */
  function gradcheck32(f: (...xs: Tensor[]) => Tensor, inputs: Tensor[], samples = 8): void {
    const analytic = grads(true, f, inputs, 7);
    const loss = (xs: Tensor[]) =>
      withWasm(true, () =>
        tidy(() => {
          const y = f(...xs);
          const c = f32(y.shape, 7).dataSync();
          const d = y.dataSync();
          let total = 0;
          for (let i = 0; i < d.length; i++) total += d[i] * c[i];
          return total;
        }),
      );
    const eps = 1e-2;
    inputs.forEach((x, k) => {
      const data = x.dataSync() as Float32Array;
      for (let s = 0; s < samples; s++) {
        const i = (s * 2654435761) % data.length;
        const moved = (delta: number) => {
          const copy = data.slice();
          copy[i] += delta;
          return loss(inputs.map((t, j) => (j === k ? tensor(copy, { shape: x.shape }) : t)));
        };
        const numeric = (moved(eps) - moved(-eps)) / (2 * eps);
        const got = analytic[k].dataSync()[i];
        if (!(Math.abs(got - numeric) <= 2e-2 + 2e-2 * Math.abs(numeric)))
          throw new Error(`gradcheck32: input ${k} element ${i}: analytic ${got}, numeric ${numeric}`);
      }
    });
  }

  test('float32 gradcheck through the fast path: norm → gelu → matmul → log-softmax, attention, RMS norm → silu', () => {
    tidy(() => {
      const x = f32([64, 72], 1, 2);
      const w = f32([72], 2).add(1);
      const b = f32([72], 3);
      const W = f32([72, 40], 4, 0.3);
      gradcheck32((t, ww, bb, m) => logSoftmax(gelu(layerNorm(t, ww, bb)).matmul(m)), [x, w, b, W]);
      const q = f32([1, 2, 16, 8], 5);
      const k = f32([1, 2, 16, 8], 6);
      const v = f32([1, 2, 16, 8], 7);
      gradcheck32((a, bk, c) => scaledDotProductAttention(a, bk, c, { causal: true }), [q, k, v]);
      gradcheck32((t, ww) => silu(rmsNorm(t, ww)).mul(t), [x, w]);
    });
  });

  test('fill and copy on tensors in the wasm memory: zeros, strided copies, a slice gradient (same bits)', () => {
    const resident = (t: Tensor) => getWasmRuntime().addressOf((t.storage as CpuStorage).data) !== undefined;
    fc.assert(
      fc.property(
        fc.integer({ min: 40, max: 90 }),
        fc.integer({ min: 64, max: 130 }),
        fc.nat(),
        (R, C, seed) => {
          // Inputs made inside each run, so that with the wasm kernels on they live in the wasm memory.
          const run = (on: boolean) =>
            withWasm(on, () =>
              tidy(() => {
                // Blocks the outputs will reuse hold ones (the arena does not clear them): a fill that missed
                // an element would leave a 1.
                full([12 * R * C], 1).dispose();
                const x = leaf(f32([R, C], seed));
                const picked = slice(x, 1, 3, C - 1, 2); // a strided view: every other column
                picked
                  .mul(f32(picked.shape, seed + 1))
                  .sum()
                  .backward(); // fills 0, copies into a strided view
                const outs = [
                  transpose(x).contiguous(), // element by element
                  slice(x, 0, 1, R - 1).contiguous(), // one dense run
                  picked.contiguous(), // runs of one element, step 2
                  x.grad as Tensor,
                  zeros([R, C]),
                  full([R, C], -0), // -0 is not all zero bytes: the TS fill
                  full([R, C], 2.5),
                ];
                if (on) expect(outs.every(resident)).toBe(true);
                return outs.map((t) => Buffer.from((t.dataSync() as Float32Array).buffer));
              }),
            );
          const want = run(false);
          for (const [i, bits] of run(true).entries()) expect(bits.equals(want[i]), `output ${i}`).toBe(true);
        },
      ),
      { numRuns: 15 },
    );
  });

  test('float64 inputs fall back to the TypeScript kernels (bitwise equal)', () => {
    tidy(() => {
      const x = f32([70, 80], 3).cast('float64');
      const w = f32([80], 4).cast('float64');
      for (const f of [
        () => exp(x),
        () => add(x, w),
        () => layerNorm(x, w, w),
        () => softmax(x),
        () =>
          scaledDotProductAttention(
            x.reshape([1, 1, 70, 80]),
            x.reshape([1, 1, 70, 80]),
            x.reshape([1, 1, 70, 80]),
          ),
      ]) {
        const [got, want] = both(f);
        expect(Array.from(got.dataSync())).toEqual(Array.from(want.dataSync()));
      }
    });
  });
});

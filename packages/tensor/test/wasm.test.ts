/**
 * The WebAssembly SIMD kernels (src/backend/wasm) against the plain TypeScript kernels they replace: the same
 * op through the Tensor API, with the wasm kernels registered and without, on random shapes (odd sizes,
 * size 1, sizes off the 4-lane / 4×8-tile grid, batched with broadcast, transposed views).
 *
 * Tolerances: matmul accumulates in float32 (the reference in float64), so each element may differ by
 * 1e-6·K·(|A|·|B|)ᵢⱼ (a generous γ_K bound, ε₃₂ ≈ 6e-8); softmax by 1e-6 absolute; log-softmax and
 * logprobs by 1e-6 + 3e-7·|expected| (about 2.5 ulp of the result).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type Kernels,
  type Tensor,
  abs,
  getBackend,
  logSoftmax,
  logprobs,
  matmul,
  memory,
  registerKernel,
  softmax,
  tensor,
  tidy,
  transpose,
} from '../src/index.js';
import { uleb, sleb } from '../src/backend/wasm/builder.js';
import {
  buildKernelModule,
  disableWasmKernels,
  enableWasmKernels,
  wasmKernelsEnabled,
  wasmSimdSupported,
} from '../src/backend/wasm/index.js';
import { assertGradcheck } from '../src/testing/index.js';
import { f32, leaf, values, withWasm } from './wasm-helpers.js';

const RUNS = { numRuns: 60 };
const kernels = getBackend('cpu').kernels;
const original: Pick<Kernels, 'matmul' | 'softmax' | 'logprobs'> = {
  matmul: kernels.matmul,
  softmax: kernels.softmax,
  logprobs: kernels.logprobs,
};

function expectWithin(actual: Tensor, expected: Tensor, bound: (i: number, e: number) => number): void {
  expect(actual.shape).toEqual(expected.shape);
  expect(actual.dtype).toBe(expected.dtype);
  const a = actual.dataSync();
  const e = expected.dataSync();
  for (let i = 0; i < e.length; i++) {
    const err = Math.abs(a[i] - e[i]);
    if (!(err <= bound(i, e[i])) && a[i] !== e[i] && !(Number.isNaN(a[i]) && Number.isNaN(e[i])))
      throw new Error(`element ${i}: got ${a[i]}, expected ${e[i]} (shape [${expected.shape}])`);
  }
}

function expectLeakFree(body: () => void): void {
  const before = memory();
  body();
  const after = memory();
  expect(after.tensors).toBe(before.tensors);
  expect(after.storages).toBe(before.storages);
}

describe('wasm module builder', () => {
  test('LEB128 encodings', () => {
    const enc = (f: (v: number, o: number[]) => void, v: number) => {
      const o: number[] = [];
      f(v, o);
      return o;
    };
    expect(enc(uleb, 0)).toEqual([0]);
    expect(enc(uleb, 127)).toEqual([0x7f]);
    expect(enc(uleb, 128)).toEqual([0x80, 0x01]);
    expect(enc(uleb, 624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(enc(sleb, 0)).toEqual([0]);
    expect(enc(sleb, -1)).toEqual([0x7f]);
    expect(enc(sleb, 63)).toEqual([0x3f]);
    expect(enc(sleb, 64)).toEqual([0xc0, 0x00]);
    expect(enc(sleb, -64)).toEqual([0x40]);
    expect(enc(sleb, -123456)).toEqual([0xc0, 0xbb, 0x78]);
  });

  test.skipIf(!wasmSimdSupported())('the generated kernel module validates', () => {
    const api = (globalThis as unknown as { WebAssembly: { validate(b: Uint8Array): boolean } }).WebAssembly;
    expect(api.validate(buildKernelModule())).toBe(true);
  });
});

describe.skipIf(!wasmSimdSupported())('wasm SIMD kernels vs the TypeScript kernels', () => {
  beforeAll(() => {
    disableWasmKernels();
  });
  afterAll(() => {
    disableWasmKernels();
    // Whatever happened above, leave the backend with the kernels it started with.
    for (const name of ['matmul', 'softmax', 'logprobs'] as const)
      registerKernel('cpu', name, original[name]);
  });

  test('enable / disable swap exactly matmul, softmax and logprobs', () => {
    expect(enableWasmKernels()).toBe(true);
    expect(wasmKernelsEnabled()).toBe(true);
    expect(kernels.matmul).not.toBe(original.matmul);
    expect(kernels.softmax).not.toBe(original.softmax);
    expect(kernels.logprobs).not.toBe(original.logprobs);
    enableWasmKernels(); // twice is harmless
    disableWasmKernels();
    expect(kernels.matmul).toBe(original.matmul);
    expect(kernels.softmax).toBe(original.softmax);
    expect(kernels.logprobs).toBe(original.logprobs);
  });

  /** wasm matmul equals the reference within 1e-6·K·(|A|·|B|). */
  function checkMatmul(a: Tensor, b: Tensor): void {
    const K = a.shape[a.shape.length - 1];
    const got = withWasm(true, () => matmul(a, b));
    const want = withWasm(false, () => matmul(a, b));
    const mag = withWasm(false, () => matmul(abs(a), abs(b))).dataSync();
    expectWithin(got, want, (i) => 1e-6 * K * mag[i] + 1e-30);
  }

  const dim = (max: number) => fc.integer({ min: 1, max });

  test('matmul: random 2-d shapes, odd and off-tile sizes', () => {
    expectLeakFree(() =>
      fc.assert(
        fc.property(dim(21), dim(21), dim(40), fc.nat(), (M, N, K, seed) =>
          tidy(() => checkMatmul(f32([M, K], seed), f32([K, N], seed + 1))),
        ),
        RUNS,
      ),
    );
  });

  test('matmul: transposed operands (strided views)', () => {
    fc.assert(
      fc.property(dim(13), dim(19), dim(17), fc.boolean(), fc.boolean(), fc.nat(), (M, N, K, ta, tb, seed) =>
        tidy(() => {
          const a = ta ? transpose(f32([K, M], seed), 0, 1) : f32([M, K], seed);
          const b = tb ? transpose(f32([N, K], seed + 1), 0, 1) : f32([K, N], seed + 1);
          checkMatmul(a, b);
        }),
      ),
      RUNS,
    );
  });

  test('matmul: batched, with broadcast batch dims on either side, and vectors', () => {
    const batchDim = fc.integer({ min: 1, max: 3 });
    fc.assert(
      fc.property(
        batchDim,
        batchDim,
        dim(9),
        dim(11),
        dim(10),
        fc.constantFrom('both', 'a', 'b', 'vec-left', 'vec-right'),
        fc.nat(),
        (p, q, M, N, K, mode, seed) =>
          tidy(() => {
            if (mode === 'vec-left') return checkMatmul(f32([K], seed), f32([p, K, N], seed + 1));
            if (mode === 'vec-right') return checkMatmul(f32([p, M, K], seed), f32([K], seed + 1));
            const aShape = mode === 'b' ? [M, K] : [p, 1, M, K];
            const bShape = mode === 'a' ? [K, N] : [q, K, N];
            checkMatmul(f32(aShape, seed), f32(bShape, seed + 1));
          }),
      ),
      RUNS,
    );
  });

  test('matmul: larger fixed shapes (several panels, all tails, several blocks of k)', () => {
    for (const [M, N, K] of [
      [128, 128, 128],
      [70, 36, 600],
      [67, 131, 65],
      [4, 8, 1],
      [1, 1, 300],
      [5, 7, 257],
      [255, 3, 33],
    ])
      tidy(() => checkMatmul(f32([M, K], M + N, 2), f32([K, N], K, 2)));
  });

  test('matmul: K = 0 gives zeros, empty outputs work', () => {
    tidy(() => {
      const z = withWasm(true, () =>
        matmul(
          tensor(new Float32Array(0), { shape: [3, 0] }),
          tensor(new Float32Array(0), { shape: [0, 5] }),
        ),
      );
      expect(Array.from(z.dataSync())).toEqual(new Array(15).fill(0));
      const e = withWasm(true, () => matmul(tensor(new Float32Array(0), { shape: [0, 4] }), f32([4, 5], 1)));
      expect(e.shape).toEqual([0, 5]);
    });
  });

  test('matmul: float64 and int32 fall back to the TypeScript kernel (bitwise equal)', () => {
    tidy(() => {
      for (const dtype of ['float64', 'int32'] as const) {
        const a = tensor(values(7 * 9, 3, 50), { shape: [7, 9] }).cast(dtype);
        const b = tensor(values(9 * 5, 4, 50), { shape: [9, 5] }).cast(dtype);
        const got = withWasm(true, () => matmul(a, b));
        const want = withWasm(false, () => matmul(a, b));
        expect(got.dtype).toBe(dtype);
        expect(Array.from(got.dataSync())).toEqual(Array.from(want.dataSync()));
      }
    });
  });

  test('autograd through matmul and softmax: float64 gradcheck with wasm enabled, float32 gradients close', () => {
    tidy(() => {
      const f = (a: Tensor, b: Tensor) => logSoftmax(matmul(a, b).tanh()).mul(softmax(matmul(a, b)));
      const a64 = f32([2, 5, 7], 11).cast('float64');
      const b64 = f32([7, 6], 12).cast('float64');
      withWasm(true, () => assertGradcheck(f, [a64, b64]));
      // float32 through the wasm kernels, against the float64 gradients.
      const grads = (dtype: 'float32' | 'float64') =>
        withWasm(dtype === 'float32', () => {
          const a = leaf(a64.cast(dtype));
          const b = leaf(b64.cast(dtype));
          f(a, b).sum().backward();
          return [a.grad as Tensor, b.grad as Tensor];
        });
      const [g32, g64] = [grads('float32'), grads('float64')];
      for (let i = 0; i < 2; i++)
        expectWithin(g32[i].cast('float64'), g64[i], (_, e) => 1e-5 + 1e-4 * Math.abs(e));
    });
  });

  const softmaxBound = (_: number, __: number) => 1e-6;
  const logBound = (_: number, e: number) => 1e-6 + 3e-7 * Math.abs(e);

  test('softmax / log-softmax rows: random widths incl. 1 and off the 4-lane grid, other axes', () => {
    expectLeakFree(() =>
      fc.assert(
        fc.property(
          dim(9),
          dim(70),
          fc.double({ min: 0.1, max: 20, noNaN: true }),
          fc.nat(),
          (R, W, scale, seed) =>
            tidy(() => {
              const x = f32([R, W], seed, scale);
              for (const [op, bound] of [
                [softmax, softmaxBound],
                [logSoftmax, logBound],
              ] as const) {
                expectWithin(
                  withWasm(true, () => op(x)),
                  withWasm(false, () => op(x)),
                  bound,
                );
                // Along axis 0: the op layer transposes and makes the input contiguous first.
                expectWithin(
                  withWasm(true, () => op(x, 0)),
                  withWasm(false, () => op(x, 0)),
                  bound,
                );
              }
            }),
        ),
        RUNS,
      ),
    );
  });

  test('softmax: wide rows (several chunks), masked -Infinity entries and fully masked rows', () => {
    tidy(() => {
      const wide = f32([40, 1031], 5, 8);
      expectWithin(
        withWasm(true, () => softmax(wide)),
        withWasm(false, () => softmax(wide)),
        softmaxBound,
      );
      expectWithin(
        withWasm(true, () => logSoftmax(wide)),
        withWasm(false, () => logSoftmax(wide)),
        logBound,
      );
      const data = values(6 * 9, 6, 3);
      for (let j = 0; j < 9; j++) if (j % 3 === 1) data[j] = Number.NEGATIVE_INFINITY; // row 0 partly masked
      for (let j = 0; j < 9; j++) data[9 + j] = Number.NEGATIVE_INFINITY; // row 1 fully masked
      data[20] = -200; // far below exp's range: exactly 0
      const x = tensor(data, { shape: [6, 9] });
      for (const [op, bound] of [
        [softmax, softmaxBound],
        [logSoftmax, logBound],
      ] as const) {
        const got = withWasm(true, () => op(x));
        const want = withWasm(false, () => op(x));
        const g = got.dataSync();
        const w = want.dataSync();
        for (let i = 0; i < w.length; i++) if (!Number.isFinite(w[i])) expect(g[i]).toBe(w[i]);
        expectWithin(got, want, (i, e) => (Number.isFinite(e) ? bound(i, e) : 0));
      }
      expect(withWasm(true, () => softmax(x)).dataSync()[1]).toBe(0);
    });
  });

  test('logprobs (fused forward) and its gradient', () => {
    fc.assert(
      fc.property(dim(7), dim(50), fc.nat(), (R, V, seed) =>
        tidy(() => {
          const logits = f32([R, V], seed, 6);
          const targets = tensor(
            Int32Array.from({ length: R }, (_, i) => (seed + i * 7) % V),
            { shape: [R] },
          );
          expectWithin(
            withWasm(true, () => logprobs(logits, targets)),
            withWasm(false, () => logprobs(logits, targets)),
            logBound,
          );
          const grad = (on: boolean) =>
            withWasm(on, () => {
              const l = leaf(logits);
              logprobs(l, targets).sum().backward();
              return l.grad as Tensor;
            });
          expectWithin(grad(true), grad(false), (_, e) => 1e-6 + 1e-5 * Math.abs(e));
        }),
      ),
      { numRuns: 30 },
    );
    tidy(() => {
      const bad = tensor(Int32Array.from([0, 9]), { shape: [2] });
      expect(() => withWasm(true, () => logprobs(f32([2, 9], 1), bad))).toThrow(/out of range/);
    });
  });
});

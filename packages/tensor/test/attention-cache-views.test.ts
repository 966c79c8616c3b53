/**
 * Attention reads K and V in place when no gradient is taken and each head's rows are dense: a KV cache's
 * view of its first S positions, whose batch and head strides are the cache's. The result must be the one
 * of a dense copy, bit for bit (the same arithmetic in the same order), on the TypeScript kernel and on the
 * wasm kernel, whether the cache lives in the wasm memory (1,024 floats and more) or not.
 */
import { describe, expect, test } from 'vitest';
import { type Tensor, noGrad, scaledDotProductAttention, tensor, tidy } from '../src/index.js';
import { f32, withWasm } from './wasm-helpers.js';

function compare(B: number, H: number, Hkv: number, T: number, S: number, capacity: number, D: number) {
  const q = f32([B, H, T, D], 1);
  const cacheK = f32([B, Hkv, capacity, D], 2);
  const cacheV = f32([B, Hkv, capacity, D], 3);
  const [k, v] = [cacheK.narrow(2, 0, S), cacheV.narrow(2, 0, S)];
  expect(k.isContiguous).toBe(Hkv * B === 1);
  const keep = Uint8Array.from({ length: B * S }, (_, e) => Number(e % S < S - (Math.floor(e / S) % S)));
  const mask = tensor(keep, { shape: [B, 1, 1, S], dtype: 'bool' });
  const run = (kk: Tensor, vv: Tensor) =>
    noGrad(() => [
      Array.from(scaledDotProductAttention(q, kk, vv, { causal: true }).dataSync()),
      Array.from(scaledDotProductAttention(q, kk, vv, { mask }).dataSync()),
    ]);
  expect(run(k, v)).toEqual(run(k.contiguous(), v.contiguous()));
}

describe('attention over a KV cache view', () => {
  for (const wasm of [false, true])
    test(`${wasm ? 'wasm' : 'TypeScript'} kernel: the dense copy's bits, small and resident caches`, () => {
      withWasm(wasm, () =>
        tidy(() => {
          compare(1, 2, 1, 1, 5, 9, 8);
          compare(2, 4, 2, 1, 7, 20, 16);
          compare(3, 2, 2, 4, 30, 64, 16);
          compare(2, 4, 2, 3, 100, 300, 32);
        }),
      );
    });

  test('with a gradient to take, K and V are copied dense and the gradients are right', () => {
    tidy(() => {
      const q = f32([1, 2, 1, 4], 4);
      const k = tensor(
        Array.from({ length: 2 * 6 * 4 }, (_, i) => Math.sin(i)),
        {
          shape: [1, 2, 6, 4],
          requiresGrad: true,
        },
      );
      const view = k.narrow(2, 0, 3);
      scaledDotProductAttention(q, view, view, { causal: true }).sum().backward();
      const g = Array.from(k.grad!.dataSync());
      // Positions 3–5 of each head were not read: their gradient is zero; the read ones are not all zero.
      for (const h of [0, 1]) {
        expect(g.slice(h * 24 + 12, h * 24 + 24).every((x) => x === 0)).toBe(true);
        expect(g.slice(h * 24, h * 24 + 12).some((x) => x !== 0)).toBe(true);
      }
    });
  });
});

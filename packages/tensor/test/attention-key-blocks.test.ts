/**
 * The wasm attention kernels take keys four at a time when the head size D is a multiple of 4 (the dot
 * products and exp as vectors, each output loaded once for four terms) and one at a time otherwise. Both
 * paths must give the same bits: heads of D = 16 against the same heads padded with a zero 17th column
 * (which takes the one-key path: its scalar tail adds 0·0 where the four-key path adds 0), forward and
 * backward, causal, masked by row prefixes and grouped-query, over key counts that leave every remainder.
 */
import { describe, expect, test } from 'vitest';
import { type Tensor, concat, scaledDotProductAttention, tensor, tidy, zeros } from '../src/index.js';
import { f32, leaf, withWasm } from './wasm-helpers.js';

const bitsOf = (t: Tensor, D: number) => {
  const data = t.dataSync();
  const out: number[] = [];
  for (let i = 0; i < data.length; i += t.shape.at(-1)!) out.push(...data.subarray(i, i + D));
  return out;
};

function compare(B: number, H: number, Hkv: number, T: number, S: number, seed: number) {
  const D = 16;
  const padded = (x: Tensor) => concat([x, zeros([...x.shape.slice(0, -1), 1])], -1);
  const [q, k, v, dout] = [
    f32([B, H, T, D], seed),
    f32([B, Hkv, S, D], seed + 1),
    f32([B, Hkv, S, D], seed + 2),
    f32([B, H, T, D], seed + 3),
  ];
  const keep = Uint8Array.from({ length: B * S }, (_, e) => Number(e % S < S - (Math.floor(e / S) % 5)));
  const mask = tensor(keep, { shape: [B, 1, 1, S], dtype: 'bool' });
  for (const options of [{ causal: true }, { mask }, {}]) {
    const run = (qq: Tensor, kk: Tensor, vv: Tensor, g: Tensor) => {
      const [lq, lk, lv] = [leaf(qq), leaf(kk), leaf(vv)];
      const out = scaledDotProductAttention(lq, lk, lv, { ...options, scale: 0.25 });
      out.mul(g).sum().backward();
      return [out, lq.grad!, lk.grad!, lv.grad!].map((t) => bitsOf(t, D));
    };
    const four = run(q, k, v, dout);
    const one = run(padded(q), padded(k), padded(v), padded(dout));
    expect(four).toEqual(one);
  }
}

describe('wasm attention, four keys at a time', () => {
  test('gives the bits of one key at a time, forward and backward', () => {
    withWasm(true, () =>
      tidy(() => {
        for (const S of [1, 3, 4, 5, 6, 7, 8, 13]) compare(1, 2, 1, Math.min(S, 5), S, S);
        compare(2, 4, 2, 6, 11, 40);
        compare(2, 2, 2, 1, 37, 50);
      }),
    );
  });
});

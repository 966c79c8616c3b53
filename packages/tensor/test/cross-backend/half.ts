/**
 * float16 and bfloat16 on a device against the CPU backend: conversions (casts both ways, between the two
 * half types, to and from int32, strided copies, fill and where) bit for bit, on values that reach every
 * rounding case (ties, subnormals, overflow, NaN, infinities); and ops that compute in float32 (matmul, also
 * through a transposed view, elementwise maps on contiguous and strided views, reductions, softmax,
 * logprobs, norms and attention forward and backward) within one half ulp, since each device rounds its own
 * float32 result. Used
 * by the emulated CUDA device's smoke test and by the cuda and webgpu cross-backend tests.
 */
import { test } from 'vitest';
import {
  type Tensor,
  cast,
  full,
  gather,
  layerNorm,
  logSoftmax,
  logprobs,
  matmul,
  rmsNorm,
  scaledDotProductAttention,
  softmax,
  sum,
  transpose,
  where,
} from '../../src/index.js';
import { checkSame, ints, leaf } from './compare.js';

const vals = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => Math.fround(Math.sin(1.7 * i + seed)));

/** Softmax, log-softmax and logprobs on half rows, forward and backward (the gradients are half too). */
function rowKernels(dev: string): Tensor[] {
  const x = cast(leaf(dev, [4, 50], vals(200, 29)), 'bfloat16')
    .mul(3)
    .detach();
  x.requiresGrad = true;
  const y = cast(leaf(dev, [3, 20], vals(60, 30)), 'float16').detach();
  y.requiresGrad = true;
  const lp = logprobs(x, ints(dev, [4], [0, 49, 7, 7]));
  const weights = (n: number, seed: number, like: Tensor) =>
    cast(leaf(dev, like.shape, vals(n, seed)), like.dtype);
  lp.mul(weights(4, 31, lp))
    .sum()
    .backward();
  const soft = softmax(y, -1);
  const logSoft = logSoftmax(y, -1);
  soft
    .mul(weights(60, 32, soft))
    .add(logSoft.mul(weights(60, 33, logSoft)))
    .sum()
    .backward();
  return [lp, x.grad!.clone(), soft, logSoft, y.grad!.clone()];
}

/**
 * Layer and RMS norms and causal GQA attention on half inputs, forward and backward, on inputs where a
 * statistic rounded to the half type would show: rows near 100 (their mean), scores near 20 (the
 * log-sum-exp), and gradients along the normalised values.
 */
function fusedKernels(dev: string): Tensor[] {
  const param = (
    shape: number[],
    seed: number,
    scale: number,
    shift: number,
    dtype: 'float16' | 'bfloat16',
  ) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const t = cast(leaf(dev, shape, vals(n, seed)).mul(scale).add(shift), dtype).detach();
    t.requiresGrad = true;
    return t;
  };
  const along = (y: Tensor, seed: number) =>
    y.mul(y.detach().add(cast(leaf(dev, y.shape, vals(y.size, seed)), y.dtype))).sum();
  const x = param([6, 48], 40, 2, 100, 'bfloat16');
  const w = param([48], 41, 0.5, 1, 'bfloat16');
  const b = param([48], 42, 1, 0, 'bfloat16');
  const r = param([6, 48], 43, 3, 0.5, 'float16');
  const rw = param([48], 44, 0.5, 1, 'float16');
  const [B, H, Hkv, T, D] = [1, 4, 2, 10, 16];
  const q = param([B, H, T, D], 45, 3, 0, 'bfloat16');
  const k = param([B, Hkv, T, D], 46, 3, 0, 'bfloat16');
  const v = param([B, Hkv, T, D], 47, 1, 0, 'bfloat16');
  const ln = layerNorm(x, w, b);
  const rms = rmsNorm(r, rw);
  const att = scaledDotProductAttention(q, k, v, { causal: true });
  along(ln, 48).backward();
  along(rms, 49).backward();
  att
    .mul(cast(leaf(dev, att.shape, vals(att.size, 50)), 'bfloat16'))
    .sum()
    .backward();
  return [ln, rms, att, ...[x, w, b, r, rw, q, k, v].map((t) => t.grad!.clone())];
}

/** `float64`: whether the device has float64 (casts to it are then checked too; WebGPU has none). */
export function halfPrecisionCases(device: string, options: { float64: boolean } = { float64: true }): void {
  test('float16 and bfloat16: conversions bit for bit, fill and where; other ops in float32', async () => {
    const specials = [0, -0, 1, -1 / 3, 65504, 65519, 65520, 1e-8, 2 ** -25, 3 * 2 ** -25, 6e-5, 1e30];
    const odd = [Number.NaN, Number.POSITIVE_INFINITY, -3.4e38, 1.401298464324817e-45, 1 + 2 ** -8];
    const values = [...specials, ...odd, ...vals(40, 23).map((x) => x * 300)];
    await checkSame(
      device,
      (dev) => {
        const x = leaf(dev, [values.length], values);
        const grid = leaf(dev, [6, 10], vals(60, 24)).mul(40);
        const outs: Tensor[] = [];
        for (const half of ['float16', 'bfloat16'] as const) {
          const h = cast(x, half);
          const g = cast(grid, half);
          outs.push(
            cast(h, 'float32'),
            ...(options.float64 ? [cast(h, 'float64')] : []),
            cast(cast(h, half === 'float16' ? 'bfloat16' : 'float16'), 'float32'),
            cast(cast(grid, 'int32'), half),
            cast(g, 'int32'),
            transpose(g, 0, 1).contiguous(),
            where(g.gt(0), g, full([10], 0.1, { device: dev, dtype: half })),
          );
        }
        return outs;
      },
      { atol: 0, rtol: 0 },
      'half conversions',
    );
    await checkSame(
      device,
      (dev) => {
        const a = cast(leaf(dev, [2, 9, 40], vals(720, 25)), 'bfloat16');
        const b = cast(leaf(dev, [40, 7], vals(280, 26)), 'bfloat16');
        const s = cast(leaf(dev, [5, 33], vals(165, 27)), 'float16');
        const bt = cast(leaf(dev, [7, 40], vals(280, 28)), 'float16');
        const r = a.select(0, 0).transpose(0, 1); // a strided bfloat16 view [40, 9]
        // On cuda, matmul, the elementwise maps, the reductions, gather, softmax, logprobs, the norms and
        // attention take half views themselves; the rest go through float32 copies (half-compute.ts).
        return [
          matmul(a, b),
          matmul(cast(a, 'float16'), transpose(bt, 0, 1)),
          softmax(s, -1),
          sum(s, 1),
          s.exp().mul(s),
          s.gelu().add(s.sigmoid().div(s.abs().add(1))),
          r.silu().maximum(r.mul(0.5)).sub(r.tanh()),
          cast(s.gt(0.1), 'int32'),
          s.max(1),
          s.argmax(1),
          r.sum(0),
          gather(
            r,
            0,
            ints(
              dev,
              [3, 9],
              Array.from({ length: 27 }, (_, i) => (i * 7) % 40),
            ),
          ),
          a.mean([0, 2]),
          ...rowKernels(dev),
          ...fusedKernels(dev),
        ];
      },
      // Each device rounds its own float32 result once: they may differ by one half ulp.
      { atol: 1e-3, rtol: 8e-3 },
      'half ops',
    );
  });
}

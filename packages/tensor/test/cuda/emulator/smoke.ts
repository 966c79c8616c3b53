/**
 * Fixed cases through every primitive of the cuda backend, for the emulated device: small enough to run
 * in seconds on CPU threads, chosen to reach the paths that matter (strided and broadcast operands, each
 * reduction, batched and transposed matmul, gather/scatter, every fused kernel forward and backward (rotary included), GQA
 * with a mask and a KV-cache offset, random draws). Each is compared with the CPU backend.
 */
import { describe, test } from 'vitest';
import {
  type Tensor,
  Generator,
  adamwUpdate,
  argmax,
  cast,
  gather,
  layerNorm,
  logSoftmax,
  logprobs,
  matmul,
  max,
  normal,
  rand,
  randint,
  rmsNorm,
  rotaryEmbedding,
  scaledDotProductAttention,
  scatterAdd,
  softmax,
  sum,
  tensor,
  transpose,
  where,
  zeros,
} from '../../../src/index.js';
import { type Tolerance, checkSame, ints, leaf } from '../../cross-backend/compare.js';
import { halfPrecisionCases } from '../../cross-backend/half.js';

const vals = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => Math.fround(Math.sin(1.7 * i + seed)));
const TOL: Tolerance = { atol: 1e-5, rtol: 1e-4 };

function grads(...xs: Tensor[]): Tensor[] {
  return xs.map((x) => x.grad!.clone());
}

function weighted(out: Tensor, seed: number, device: string): Tensor {
  return sum(out.mul(tensor(Float32Array.from(vals(out.size, seed)), { device, shape: out.shape })));
}

export function emulatedSmoke(device: string): void {
  // Each test compiles its kernels with g++ first (about half a second each): allow for a loaded machine.
  describe(`${device}: every primitive on fixed cases`, { timeout: 300_000 }, () => {
    test('elementwise, casts, where, on strided and broadcast views', async () => {
      await checkSame(
        device,
        (dev) => {
          const a = leaf(dev, [3, 4, 5], vals(60, 1));
          const b = leaf(dev, [4, 1], vals(4, 2));
          const t = transpose(a, 0, 2);
          return [
            a.add(b).mul(a).sub(1),
            t.exp().add(t.gelu()).div(a.transpose(0, 2).abs().add(1)),
            a.sigmoid().add(a.tanh()).add(a.silu()),
            where(a.gt(b), a, b.mul(2)),
            cast(a.mul(10), 'int32'),
            cast(a, 'int32').neg().abs(),
            a.pow(2).sqrt().log(),
          ];
        },
        TOL,
        'elementwise',
      );
    });

    test('reductions over several axes, arg-reductions', async () => {
      await checkSame(
        device,
        (dev) => {
          const a = leaf(dev, [4, 6, 5], vals(120, 3));
          return [
            sum(a, [0, 2]),
            max(a, 1),
            argmax(a, 2),
            sum(transpose(a, 0, 1), 1, true),
            sum(leaf(dev, [300, 2], vals(600, 4)), 0),
            sum(a.gt(0), 1),
          ];
        },
        { atol: 1e-4, rtol: 1e-5 },
        'reduce',
      );
    });

    test('matmul: batched, broadcast, transposed, sizes off the tile', async () => {
      await checkSame(
        device,
        (dev) => {
          const a = leaf(dev, [2, 70, 33], vals(4620, 5));
          const b = leaf(dev, [33, 67], vals(2211, 6));
          const w = leaf(dev, [67, 33], vals(2211, 7));
          return [matmul(a, b), matmul(a, transpose(w, 0, 1)), matmul(transpose(a, 1, 2), a)];
        },
        { atol: 1e-4, rtol: 1e-5 },
        'matmul',
      );
    });

    test('gather and scatterAdd', async () => {
      await checkSame(
        device,
        (dev) => {
          const x = leaf(dev, [4, 5], vals(20, 8));
          const idx = ints(dev, [4, 3], [0, 4, 2, 1, 1, 3, 4, 0, 0, 2, 2, 2]);
          const src = leaf(dev, [4, 3], vals(12, 9));
          return [
            gather(x, 1, idx),
            scatterAdd(x, 1, idx, src),
            gather(transpose(x, 0, 1), 0, ints(dev, [2, 4], [0, 1, 2, 3, 4, 4, 4, 4])),
          ];
        },
        TOL,
        'indexing',
      );
    });

    test('softmax, log-softmax, logprobs, norms: forward and backward', async () => {
      await checkSame(
        device,
        (dev) => {
          const x = leaf(dev, [5, 37], vals(185, 10), true);
          const w = leaf(dev, [37], vals(37, 11), true);
          const bias = leaf(dev, [37], vals(37, 12), true);
          const t = ints(dev, [5], [0, 36, 5, 12, 7]);
          const outs = [
            softmax(x, -1),
            logSoftmax(x, -1),
            logprobs(x, t),
            layerNorm(x, w, bias),
            rmsNorm(x, w),
          ];
          outs
            .reduce(
              (acc: Tensor | null, o, k) =>
                acc ? acc.add(weighted(o, 20 + k, dev)) : weighted(o, 20 + k, dev),
              null,
            )!
            .backward();
          return [...outs, ...grads(x, w, bias)];
        },
        { atol: 1e-4, rtol: 1e-4 },
        'rows',
      );
    });

    test('attention: causal GQA with a KV-cache offset and a mask, forward and backward', async () => {
      await checkSame(
        device,
        (dev) => {
          const [B, H, Hkv, T, S, D] = [2, 4, 2, 9, 13, 24];
          const q = leaf(dev, [B, H, T, D], vals(B * H * T * D, 13), true);
          const k = leaf(dev, [B, Hkv, S, D], vals(B * Hkv * S * D, 14), true);
          const v = leaf(dev, [B, Hkv, S, D], vals(B * Hkv * S * D, 15), true);
          const keep = Uint8Array.from({ length: T * S }, (_, j) => (j % 5 === 2 ? 0 : 1));
          const mask = tensor(keep, { device: dev, shape: [1, 1, T, S], dtype: 'bool' });
          const out = scaledDotProductAttention(q, k, v, { causal: true, mask });
          weighted(out, 16, dev).backward();
          return [out, ...grads(q, k, v)];
        },
        { atol: 2e-5, rtol: 1e-4 },
        'attention',
      );
    });

    test('rotary embedding: forward and backward, angle tables shared over the batch', async () => {
      await checkSame(
        device,
        (dev) => {
          const [B, H, T, D] = [2, 3, 7, 10];
          const x = leaf(dev, [B, H, T, D], vals(B * H * T * D, 20), true);
          const cos = leaf(dev, [1, 1, T, D], vals(T * D, 21));
          const sin = leaf(dev, [1, 1, T, D], vals(T * D, 22));
          const out = rotaryEmbedding(x, cos, sin);
          weighted(out, 23, dev).backward();
          return [out, ...grads(x)];
        },
        TOL,
        'rotary',
      );
    });

    test('AdamW and random draws', async () => {
      await checkSame(
        device,
        (dev) => {
          const p = leaf(dev, [300], vals(300, 17));
          const m = zeros([300], { device: dev });
          const v = zeros([300], { device: dev });
          for (let step = 1; step <= 3; step++)
            adamwUpdate(p, leaf(dev, [300], vals(300, 18 + step)), m, v, {
              lr: 0.01,
              weightDecay: 0.1,
              step,
            });
          return [
            p,
            m,
            v,
            rand([1000], { device: dev, generator: new Generator(3) }),
            normal([1000], 1, 2, { device: dev, generator: new Generator(4) }),
            randint(-5, 50, [1000], { device: dev, generator: new Generator(5) }),
          ];
        },
        { atol: 2e-6, rtol: 2e-6 },
        'adamw and random',
      );
    });
    halfPrecisionCases(device);
  });
}

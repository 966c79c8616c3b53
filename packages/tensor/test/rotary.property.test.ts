/**
 * rotaryEmbedding: one kernel for x·cos + [x2, x1]·sin. It must give the bits of that composite (a
 * multiply, a multiply, an add and the halves' swap) forward and backward, so that a model moved onto it
 * trains exactly as before, and its gradient must match finite differences.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DType, type Tensor, concat, rotaryEmbedding, tensor, tidy } from '../src/index.js';
import { assertGradcheck } from '../src/testing/index.js';
import { type Spec, checkProperty, f64, specArb } from './gradient-helpers.js';
import { withWasm } from './wasm-helpers.js';

/** The composite the kernel replaces. */
function composite(x: Tensor, cos: Tensor, sin: Tensor): Tensor {
  const [x1, x2] = x.split(x.shape[3] / 2, -1);
  return x.mul(cos).add(concat([x2, x1], -1).mul(sin));
}

const caseArb = fc
  .record({
    B: fc.integer({ min: 1, max: 2 }),
    H: fc.integer({ min: 1, max: 3 }),
    T: fc.integer({ min: 1, max: 4 }),
    half: fc.integer({ min: 1, max: 4 }),
    // The angle tables per batch row, or one table broadcast over the batch.
    shared: fc.boolean(),
  })
  .chain((s) => {
    const D = 2 * s.half;
    const table = [s.shared ? 1 : s.B, 1, s.T, D];
    return fc.tuple(
      fc.constant(s),
      specArb([s.B, s.H, s.T, D]),
      specArb(table),
      specArb(table),
      specArb([s.B, s.H, s.T, D]),
    );
  });

describe('rotaryEmbedding', () => {
  for (const dtype of ['float32', 'float64'] as DType[]) {
    it(`${dtype}: the composite's bits, forward and backward`, () => {
      checkProperty(caseArb, ([, x, c, s, w]) => {
        tidy(() => {
          const make = (spec: typeof x, requiresGrad = false) =>
            tensor(spec.values, { shape: spec.shape, dtype, requiresGrad });
          const [cos, sin, weight] = [make(c), make(s), make(w)];
          const run = (f: typeof composite) => {
            const leaf = make(x, true);
            const out = f(leaf, cos, sin);
            out.mul(weight).sum().backward();
            // Zeros compared as numbers: where a gradient is 0, the composite's sum of a zero and a
            // negative zero may carry the other sign, which no later arithmetic tells apart.
            const values = (t: Tensor) => Array.from(t.dataSync(), (v) => (v === 0 ? 0 : v));
            return { out: values(out), grad: values(leaf.grad!) };
          };
          expect(run(rotaryEmbedding)).toEqual(run(composite));
        });
      });
    });
  }

  it('float32 on the wasm kernel: the TypeScript kernel’s bits, forward and backward', () => {
    const run = (wasm: boolean, spec: Spec[]) =>
      withWasm(wasm, () =>
        tidy(() => {
          const [x, c, s, w] = spec.map((v, i) =>
            tensor(v.values, { shape: v.shape, dtype: 'float32', requiresGrad: i === 0 }),
          );
          const out = rotaryEmbedding(x, c, s);
          out.mul(w).sum().backward();
          return [Array.from(out.dataSync()), Array.from(x.grad!.dataSync())];
        }),
      );
    // The wasm kernel takes 4,096 elements and more: heads of 16 (halves of two vectors) and of 10 (a
    // vector and a scalar tail), tables per batch row; and a small input, which stays on the TypeScript
    // kernel.
    for (const [B, H, T, D] of [
      [2, 3, 48, 16],
      [3, 2, 70, 10],
      [1, 2, 3, 4],
    ]) {
      const spec = (shape: number[], seed: number) => ({
        shape,
        values: Float64Array.from({ length: shape.reduce((a, b) => a * b) }, (_, i) =>
          Math.sin(seed * 7 + i * 1.3),
        ),
      });
      const cases = [
        spec([B, H, T, D], 1),
        spec([B, 1, T, D], 2),
        spec([B, 1, T, D], 3),
        spec([B, H, T, D], 4),
      ];
      expect(run(true, cases)).toEqual(run(false, cases));
    }
  });

  it('its gradient equals finite differences (float64)', () => {
    checkProperty(caseArb, ([, x, c, s]) => {
      const [cos, sin] = [f64(c), f64(s)];
      assertGradcheck((t) => rotaryEmbedding(t, cos, sin), [f64(x)]);
    });
  });

  it('takes a strided x, and refuses bad shapes and angles that require gradients, naming them', () => {
    tidy(() => {
      const x = tensor(
        Array.from({ length: 16 }, (_, i) => i),
        { shape: [1, 2, 4, 2] },
      );
      const cos = tensor([1, 1, 0, 0, 1, 1, 0, 0], { shape: [1, 1, 4, 2] });
      const sin = tensor([0, 0, -1, 1, 0, 0, -1, 1], { shape: [1, 1, 4, 2] });
      const strided = x.transpose(1, 2).contiguous().transpose(1, 2);
      expect(Array.from(rotaryEmbedding(strided, cos, sin).dataSync())).toEqual(
        Array.from(composite(x, cos, sin).dataSync()),
      );
      expect(() => rotaryEmbedding(tensor([1, 2, 3], { shape: [1, 1, 1, 3] }), cos, sin)).toThrow(
        /D even.*x \[1, 1, 1, 3\]/,
      );
      expect(() => rotaryEmbedding(x, cos.reshape([4, 2]).reshape([1, 4, 1, 2]), sin)).toThrow(
        /cos \[1, 4, 1, 2\]/,
      );
      const learned = tensor(Array.from(cos.dataSync()), { shape: [1, 1, 4, 2], requiresGrad: true });
      expect(() => rotaryEmbedding(x, learned, sin)).toThrow(/cannot require gradients/);
    });
  });
});

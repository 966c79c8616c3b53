/** Shared pieces of the cross-backend families: weighted losses, gradients, shape and value arbitraries. */
import fc from 'fast-check';
import { type Tensor, type UnaryOp, sum, tensor } from '../../src/index.js';
import { shapeArb } from '../../src/testing/index.js';
import { f32Values, sizeOf } from './compare.js';

/** Sum of out·w for a fixed random w: a scalar whose gradient reaches every output element differently. */
export function weighted(out: Tensor, w: readonly number[], device: string): Tensor {
  return sum(out.mul(tensor(Float32Array.from(w), { device, shape: out.shape })));
}

export function grads(...xs: Tensor[]): Tensor[] {
  return xs.map((x) => x.grad!.clone());
}

/** A shape plus values for it (and a second vector of weights for backward). */
export function shaped(s: Parameters<typeof shapeArb>[0], min = -2, max = 2) {
  return shapeArb(s).chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      x: f32Values(sizeOf(shape), min, max),
      w: f32Values(sizeOf(shape)),
    }),
  );
}

/** A dimension drawn to hit 1, tile edges (63/64/65) and odd sizes. */
export const dimArb = (maxDim: number) =>
  fc.oneof(
    fc.constantFrom(...[1, 2, 3, 63, 64, 65].filter((d) => d <= maxDim)),
    fc.integer({ min: 1, max: maxDim }),
  );

export const POSITIVE_ONLY = new Set<UnaryOp>(['log', 'sqrt', 'rsqrt', 'reciprocal']);

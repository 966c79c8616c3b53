/** fast-check arbitraries for shapes and tensors, so users can property-test their own ops. */
import fc from 'fast-check';
import type { DType } from '../dtype.js';
import { tensor } from '../ops/creation.js';
import { type Shape, sizeOf } from '../shape.js';
import type { Tensor } from '../tensor.js';

export interface ShapeConstraints {
  minRank?: number;
  maxRank?: number;
  minDim?: number;
  maxDim?: number;
}

export function shapeArb(c: ShapeConstraints = {}): fc.Arbitrary<number[]> {
  return fc.array(fc.integer({ min: c.minDim ?? 1, max: c.maxDim ?? 4 }), {
    minLength: c.minRank ?? 0,
    maxLength: c.maxRank ?? 3,
  });
}

/**
 * Two shapes that broadcast together: drawn from one full shape, each axis of each side kept, set to 1,
 * or (leading axes only) dropped.
 */
export function broadcastPairArb(c: ShapeConstraints = {}): fc.Arbitrary<[number[], number[]]> {
  return shapeArb({ ...c, minRank: c.minRank ?? 1 }).chain((full) => {
    const side = fc
      .tuple(
        fc.integer({ min: 0, max: full.length }),
        fc.array(fc.boolean(), { minLength: full.length, maxLength: full.length }),
      )
      .map(([drop, ones]) => full.slice(drop).map((d, i) => (ones[i + drop] ? 1 : d)));
    return fc.tuple(side, side);
  });
}

export interface ValueConstraints {
  min?: number;
  max?: number;
  /** Keep |x| at least this far from 0 (for log, div, sqrt). */
  awayFromZero?: number;
}

/** Float64Array of `n` finite values in [min, max]. */
export function valuesArb(n: number, c: ValueConstraints = {}): fc.Arbitrary<Float64Array> {
  const min = c.min ?? -2;
  const max = c.max ?? 2;
  const away = c.awayFromZero ?? 0;
  const value = fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((x) => {
    if (Math.abs(x) >= away) return x;
    return x < 0 ? -away : away;
  });
  return fc.array(value, { minLength: n, maxLength: n }).map((xs) => Float64Array.from(xs));
}

/** A tensor of the given shape (float64 by default, as gradcheck wants). */
export function tensorArb(shape: Shape, c: ValueConstraints & { dtype?: DType } = {}): fc.Arbitrary<Tensor> {
  return valuesArb(sizeOf(shape), c).map((v) => tensor(v, { shape, dtype: c.dtype ?? 'float64' }));
}

/** A shape and a tensor of it. */
export function shapedTensorArb(
  s: ShapeConstraints = {},
  c: ValueConstraints & { dtype?: DType } = {},
): fc.Arbitrary<Tensor> {
  return shapeArb(s).chain((shape) => tensorArb(shape, c));
}

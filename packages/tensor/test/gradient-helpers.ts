/**
 * Shared pieces of the gradients-*.property.test.ts suites. Arbitraries here produce plain data (shapes and
 * typed arrays), never tensors: the tensors are made inside each property run, under `tidy`, so fast-check's
 * generation and shrinking cannot leak them.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { type Tensor, memory, tensor, tidy } from '../src/index.js';
import { type ShapeConstraints, type ValueConstraints, shapeArb, valuesArb } from '../src/testing/index.js';

/** Runs per property: enough to hit size-1 dims, negative axes and the like, few enough to stay fast. */
export const RUNS = 30;

/** The data of one float64 input. */
export interface Spec {
  shape: number[];
  values: Float64Array;
}

export function sizeOfShape(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

/**
 * `n` values spread uniformly over [min, max] (default [-2, 2]), |x| ≥ awayFromZero. Unlike fc.double, whose
 * bias favours 0, tiny values and the bounds, these are generic points, where a wrong gradient cannot hide
 * behind zero inputs.
 */
export function uniformValuesArb(n: number, c: ValueConstraints = {}): fc.Arbitrary<Float64Array> {
  const min = c.min ?? -2;
  const max = c.max ?? 2;
  const away = c.awayFromZero ?? 0;
  const unit = fc.noBias(fc.integer({ min: 0, max: 1 << 30 })).map((k) => {
    const x = min + ((max - min) * k) / (1 << 30);
    return Math.abs(x) >= away ? x : x < 0 ? -away : away;
  });
  return fc.array(unit, { minLength: n, maxLength: n }).map((xs) => Float64Array.from(xs));
}

/**
 * Values in [min, max] for a fixed shape: mostly uniform (uniformValuesArb), a quarter of the time from
 * fast-check's biased valuesArb (zeros, bounds, repeated values).
 */
export function specArb(shape: number[], c: ValueConstraints = {}): fc.Arbitrary<Spec> {
  const n = sizeOfShape(shape);
  return fc
    .oneof({ arbitrary: uniformValuesArb(n, c), weight: 3 }, { arbitrary: valuesArb(n, c), weight: 1 })
    .map((values) => ({ shape, values }));
}

/** A random shape (rank 0-3, dims 1-4 unless told) and random values for it. */
export function shapedSpecArb(s: ShapeConstraints = {}, c: ValueConstraints = {}): fc.Arbitrary<Spec> {
  return shapeArb(s).chain((shape) => specArb(shape, c));
}

/**
 * Values on the lattice step·k + phase, all distinct (with `unique`, the default): far (≥ step/2 when phase is
 * step/2) from 0, from each other and from multiples of `step`, so no kink or tie lies within the
 * finite-difference step. Holds up to 81 elements.
 */
export function latticeArb(
  shape: number[],
  options: { step?: number; phase?: number; unique?: boolean } = {},
): fc.Arbitrary<Spec> {
  const step = options.step ?? 0.1;
  const phase = options.phase ?? step / 2;
  const n = sizeOfShape(shape);
  const ks = fc.integer({ min: -40, max: 40 });
  const arr =
    options.unique === false
      ? fc.array(ks, { minLength: n, maxLength: n })
      : fc.uniqueArray(ks, { minLength: n, maxLength: n });
  return arr.map((k) => ({ shape, values: Float64Array.from(k, (i) => i * step + phase) }));
}

/** A random shape with lattice values (see latticeArb). */
export function shapedLatticeArb(
  s: ShapeConstraints = {},
  options: { step?: number; phase?: number; unique?: boolean } = {},
): fc.Arbitrary<Spec> {
  return shapeArb(s).chain((shape) => latticeArb(shape, options));
}

/** Integer ids in [0, bound) for a shape. */
export function idsArb(shape: number[], bound: number): fc.Arbitrary<number[]> {
  return fc.array(fc.integer({ min: 0, max: bound - 1 }), {
    minLength: sizeOfShape(shape),
    maxLength: sizeOfShape(shape),
  });
}

/** A valid axis of a rank-`rank` tensor, negative half of the time. */
export function axisArb(rank: number): fc.Arbitrary<number> {
  return fc.integer({ min: -rank, max: rank - 1 });
}

export function f64(spec: Spec): Tensor {
  return tensor(spec.values, { shape: spec.shape, dtype: 'float64' });
}

export function int32(shape: readonly number[], values: readonly number[]): Tensor {
  return tensor(Int32Array.from(values), { shape, dtype: 'int32' });
}

export function bool(shape: readonly number[], values: readonly boolean[]): Tensor {
  return tensor(
    Uint8Array.from(values, (v) => (v ? 1 : 0)),
    { shape, dtype: 'bool' },
  );
}

/**
 * fc.assert over `arb`, each run inside `tidy`; afterwards no tensor or storage may be left alive (so a leak
 * in an op's forward or backward fails the test too).
 */
export function checkProperty<T>(arb: fc.Arbitrary<T>, body: (value: T) => void, numRuns = RUNS): void {
  const before = memory();
  fc.assert(
    fc.property(arb, (value) => {
      tidy(() => {
        body(value);
      });
    }),
    { numRuns },
  );
  const after = memory();
  expect(after.tensors).toBe(before.tensors);
  expect(after.storages).toBe(before.storages);
}

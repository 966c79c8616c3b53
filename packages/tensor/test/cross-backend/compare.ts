/**
 * Running one computation on two devices and comparing. Inputs are built from plain data on each device;
 * outputs (forward results and gradients) are read back asynchronously, so each run builds its tensors under
 * `tidy`, keeps what it returns, reads it, then disposes it.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { type Tensor, type TypedArray, dispose, memory, tensor, tidy } from '../../src/index.js';

export interface Tolerance {
  atol: number;
  rtol: number;
}

/** Float32-representable values spread over [min, max], so both devices start from identical inputs. */
export function f32Values(n: number, min = -2, max = 2): fc.Arbitrary<number[]> {
  const unit = fc
    .noBias(fc.integer({ min: 0, max: 1 << 24 }))
    .map((k) => Math.fround(min + ((max - min) * k) / (1 << 24)));
  return fc.array(unit, { minLength: n, maxLength: n });
}

export function sizeOf(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** A float32 leaf on `device`, optionally requiring grad. */
export function leaf(
  device: string,
  shape: readonly number[],
  values: readonly number[],
  grad = false,
): Tensor {
  return tensor(Float32Array.from(values), { device, shape, requiresGrad: grad });
}

export function ints(device: string, shape: readonly number[], values: readonly number[]): Tensor {
  return tensor(Int32Array.from(values), { device, shape, dtype: 'int32' });
}

/** Runs `build` on `device` and reads every tensor it returns. */
export async function evalOn(device: string, build: (device: string) => Tensor[]): Promise<TypedArray[]> {
  const outs = tidy(() => build(device));
  try {
    return await Promise.all(outs.map((t) => t.data()));
  } finally {
    dispose(outs);
  }
}

export function expectClose(actual: TypedArray, expected: TypedArray, tol: Tolerance, what: string): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (Number.isNaN(e) && Number.isNaN(a)) continue;
    if (a === e) continue;
    const err = Math.abs(a - e);
    if (!(err <= tol.atol + tol.rtol * Math.abs(e))) {
      throw new Error(
        `${what}: element ${i} is ${a}, expected ${e} (|diff| ${err.toExponential(2)} > ${tol.atol} + ${tol.rtol}·|expected|)`,
      );
    }
  }
}

/** The same computation on the CPU (reference) and on `device`; every output within `tol` (ints exact). */
export async function checkSame(
  device: string,
  build: (device: string) => Tensor[],
  tol: Tolerance,
  what: string,
): Promise<void> {
  const expected = await evalOn('cpu', build);
  const actual = await evalOn(device, build);
  expected.forEach((e, k) => {
    const exact = !(e instanceof Float32Array || e instanceof Float64Array);
    expectClose(actual[k], e, exact ? { atol: 0, rtol: 0 } : tol, `${what} (output ${k})`);
  });
}

/** fc.assert over an async property; afterwards no storage may be left alive on `device`. */
export async function property<T>(
  device: string,
  arb: fc.Arbitrary<T>,
  body: (v: T) => Promise<void>,
  numRuns: number,
) {
  const before = memory().backends[device]?.storages ?? 0;
  try {
    await fc.assert(fc.asyncProperty(arb, body), { numRuns });
  } catch (err) {
    // fast-check prints the whole counterexample; large tensors would bury the reason.
    const message = (err as Error).message;
    const cause = ((err as Error).cause as Error | undefined)?.message ?? '';
    throw new Error(`${message.slice(0, 1500)}${message.length > 1500 ? ' …' : ''}\n${cause}`);
  }
  expect(memory().backends[device]?.storages ?? 0, `${device} storages leaked`).toBe(before);
}

/**
 * Shared by the wasm-*.test.ts suites: deterministic inputs, running an op with the wasm kernels on or off,
 * and element-wise comparison within a stated tolerance.
 */
import { expect } from 'vitest';
import { type Tensor, tensor } from '../src/index.js';
import { disableWasmKernels, enableWasmKernels, wasmKernelsEnabled } from '../src/backend/wasm/index.js';
import { values } from './values.js';

export { values };

/** Runs `fn` with the wasm kernels registered (or not), restoring the previous state. */
export function withWasm<T>(on: boolean, fn: () => T): T {
  const was = wasmKernelsEnabled();
  if (on) enableWasmKernels();
  else disableWasmKernels();
  try {
    return fn();
  } finally {
    if (was) enableWasmKernels();
    else disableWasmKernels();
  }
}

export function f32(shape: readonly number[], seed: number, scale = 1): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return tensor(values(n, seed, scale), { shape: [...shape] });
}

/** A fresh leaf sharing t's data, requiring grad. */
export function leaf(t: Tensor): Tensor {
  const l = t.detach();
  l.requiresGrad = true;
  return l;
}

/**
 * Every element of `actual` within atol + rtol·|expected| of `expected`; equal infinities and NaNs match.
 * Reports the first element out of bounds.
 */
export function expectClose(actual: Tensor, expected: Tensor, atol: number, rtol: number, what = ''): void {
  expect(actual.shape).toEqual(expected.shape);
  expect(actual.dtype).toBe(expected.dtype);
  const a = actual.dataSync();
  const e = expected.dataSync();
  for (let i = 0; i < e.length; i++) {
    if (a[i] === e[i] || (Number.isNaN(a[i]) && Number.isNaN(e[i]))) continue;
    const err = Math.abs(a[i] - e[i]);
    if (!(err <= atol + rtol * Math.abs(e[i])))
      throw new Error(`${what} element ${i}: got ${a[i]}, expected ${e[i]} (shape [${expected.shape}])`);
  }
}

/** Bitwise equality of two float32 results (NaNs included). */
export function expectIdentical(actual: Tensor, expected: Tensor, what = ''): void {
  expect(actual.shape).toEqual(expected.shape);
  const a = new Uint32Array((actual.dataSync() as Float32Array).slice().buffer);
  const e = new Uint32Array((expected.dataSync() as Float32Array).slice().buffer);
  for (let i = 0; i < e.length; i++)
    if (a[i] !== e[i])
      throw new Error(`${what} element ${i} differs: ${actual.dataSync()[i]} vs ${expected.dataSync()[i]}`);
}

/** Walking strided views in row-major order: the one indexing routine every CPU kernel shares. */
import { mergeAxes } from '../../kernel-ir/walk.js';
import { isContiguous, sizeOf } from '../../shape.js';
import type { View } from '../backend.js';

/** The storage offset of every element of a (shape, strides, offset) view, in row-major order. */
export function elementOffsets(
  shape: readonly number[],
  strides: readonly number[],
  offset: number,
): Int32Array {
  const n = sizeOf(shape);
  const out = new Int32Array(n);
  if (n === 0) return out;
  const rank = shape.length;
  if (rank === 0) {
    out[0] = offset;
    return out;
  }
  const last = rank - 1;
  const lastSize = shape[last];
  const lastStride = strides[last];
  const index = new Array<number>(rank).fill(0);
  let base = offset;
  let i = 0;
  for (;;) {
    for (let j = 0; j < lastSize; j++) out[i++] = base + j * lastStride;
    let d = last - 1;
    for (; d >= 0; d--) {
      index[d]++;
      base += strides[d];
      if (index[d] < shape[d]) break;
      base -= strides[d] * shape[d];
      index[d] = 0;
    }
    if (d < 0) return out;
  }
}

/** How a view lays out a shape: its strides and the storage offset of its first element. */
export interface Layout {
  readonly strides: readonly number[];
  readonly offset: number;
}

/**
 * Walks `shape` in row-major order as runs along its innermost axis, for several views at once, without
 * building an offset per element: calls `run(starts, n, steps)` for each run, with `starts[k]` view k's
 * storage offset at the run's first element and `steps[k]` its stride along the run (`starts` is reused
 * between calls). The axes are merged first (kernel-ir/walk.ts), so runs are as long as the layouts allow
 * (a dense tail becomes one run).
 */
export function forEachRun(
  shape: readonly number[],
  views: readonly Layout[],
  run: (starts: number[], n: number, steps: readonly number[]) => void,
): void {
  if (sizeOf(shape) === 0) return;
  const { shape: sizes, strides } = mergeAxes(
    shape,
    views.map((v) => v.strides),
  );
  const starts = views.map((v) => v.offset);
  if (sizes.length === 0) {
    run(
      starts,
      1,
      views.map(() => 0),
    );
    return;
  }
  const last = sizes.length - 1;
  const n = sizes[last];
  const steps = strides.map((st) => st[last]);
  const bases = views.map((v) => v.offset);
  const index = new Array<number>(last).fill(0);
  for (;;) {
    for (let k = 0; k < bases.length; k++) starts[k] = bases[k];
    run(starts, n, steps);
    let d = last - 1;
    for (; d >= 0; d--) {
      index[d]++;
      for (let k = 0; k < bases.length; k++) bases[k] += strides[k][d];
      if (index[d] < sizes[d]) break;
      for (let k = 0; k < bases.length; k++) bases[k] -= strides[k][d] * sizes[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

export function viewOffsets(view: View): Int32Array {
  return elementOffsets(view.shape, view.strides, view.offset);
}

export function isDense(view: View): boolean {
  return isContiguous(view.shape, view.strides);
}

/** Throws unless a fused kernel got the contiguous input the op layer promised it. */
export function assertDense(kernel: string, ...views: (View | null)[]): void {
  for (const v of views) {
    if (v && !isDense(v)) throw new Error(`cpu ${kernel}: expected a contiguous input of shape [${v.shape}]`);
  }
}

/** Walking strided views in row-major order: the one indexing routine every CPU kernel shares. */
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

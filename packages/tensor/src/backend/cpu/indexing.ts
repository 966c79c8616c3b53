import type { View } from '../backend.js';
import { dataOf } from './storage.js';
import { elementOffsets, viewOffsets } from './strided.js';

/** Offsets into `target` of every element of an index-shaped walk, with the `dim` axis left to the index. */
function offsetsBesideDim(target: View, shape: readonly number[], dim: number): Int32Array {
  const strides = target.strides.map((s, i) => (i === dim ? 0 : s));
  return elementOffsets(shape, strides, target.offset);
}

function checkIndex(kernel: string, id: number, size: number, dim: number): void {
  if (!(id >= 0 && id < size)) {
    throw new Error(`${kernel}: index ${id} is out of range for dimension ${dim} of size ${size}`);
  }
}

export function gather(x: View, dim: number, index: View, out: View): void {
  const xs = dataOf(x);
  const ids = dataOf(index);
  const o = dataOf(out);
  const base = offsetsBesideDim(x, index.shape, dim);
  const io = viewOffsets(index);
  const size = x.shape[dim];
  const stride = x.strides[dim];
  for (let i = 0; i < io.length; i++) {
    const id = ids[io[i]];
    checkIndex('gather', id, size, dim);
    o[i] = xs[base[i] + id * stride];
  }
}

export function scatterAdd(dst: View, dim: number, index: View, src: View): void {
  const d = dataOf(dst);
  const ids = dataOf(index);
  const s = dataOf(src);
  const base = offsetsBesideDim(dst, index.shape, dim);
  const io = viewOffsets(index);
  const so = viewOffsets(src);
  const size = dst.shape[dim];
  const stride = dst.strides[dim];
  for (let i = 0; i < io.length; i++) {
    const id = ids[io[i]];
    checkIndex('scatterAdd', id, size, dim);
    d[base[i] + id * stride] += s[so[i]];
  }
}

import type { View } from '../backend.js';
import { dataOf } from './storage.js';
import { forEachRun } from './strided.js';

/** `target` read beside the `dim` axis (its stride zeroed): the index supplies the position along it. */
const besideDim = (target: View, dim: number) => ({
  strides: target.strides.map((s, i) => (i === dim ? 0 : s)),
  offset: target.offset,
});

export function checkIndex(kernel: string, id: number, size: number, dim: number): void {
  if (!(id >= 0 && id < size)) {
    throw new Error(`${kernel}: index ${id} is out of range for dimension ${dim} of size ${size}`);
  }
}

export function gather(x: View, dim: number, index: View, out: View): void {
  const xs = dataOf(x);
  const ids = dataOf(index);
  const o = dataOf(out);
  const size = x.shape[dim];
  const stride = x.strides[dim];
  forEachRun(index.shape, [besideDim(x, dim), index, out], ([xAt, iAt, oAt], n, [xStep, iStep, oStep]) => {
    for (let j = 0; j < n; j++) {
      const id = ids[iAt + j * iStep];
      checkIndex('gather', id, size, dim);
      o[oAt + j * oStep] = xs[xAt + j * xStep + id * stride];
    }
  });
}

export function scatterAdd(dst: View, dim: number, index: View, src: View): void {
  const d = dataOf(dst);
  const ids = dataOf(index);
  const s = dataOf(src);
  const size = dst.shape[dim];
  const stride = dst.strides[dim];
  forEachRun(index.shape, [besideDim(dst, dim), index, src], ([dAt, iAt, sAt], n, [dStep, iStep, sStep]) => {
    for (let j = 0; j < n; j++) {
      const id = ids[iAt + j * iStep];
      checkIndex('scatterAdd', id, size, dim);
      d[dAt + j * dStep + id * stride] += s[sAt + j * sStep];
    }
  });
}

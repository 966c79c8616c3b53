import type { View } from '../backend.js';
import { dataOf } from './storage.js';
import { elementOffsets } from './strided.js';

/**
 * An index-shaped walk as rows along its last axis: for each operand (strides and offset), the offset
 * of every row's first element, and its step along the row. Offsets per row, not per element: the
 * inner loops run over a row with a fixed step (an embedding's 64 features, a broadcast index's stride 0).
 */
function rowWalk(
  shape: readonly number[],
  operands: readonly { strides: readonly number[]; offset: number }[],
): { rowLength: number; bases: Int32Array[]; steps: number[] } {
  const rank = shape.length;
  if (rank === 0)
    return {
      rowLength: 1,
      bases: operands.map((o) => Int32Array.of(o.offset)),
      steps: operands.map(() => 0),
    };
  const outer = shape.slice(0, rank - 1);
  return {
    rowLength: shape[rank - 1],
    bases: operands.map((o) => elementOffsets(outer, o.strides.slice(0, rank - 1), o.offset)),
    steps: operands.map((o) => o.strides[rank - 1]),
  };
}

/** `target` read beside the `dim` axis (its stride zeroed): the index supplies the position along it. */
const besideDim = (target: View, dim: number) => ({
  strides: target.strides.map((s, i) => (i === dim ? 0 : s)),
  offset: target.offset,
});

function checkIndex(kernel: string, id: number, size: number, dim: number): void {
  if (!(id >= 0 && id < size)) {
    throw new Error(`${kernel}: index ${id} is out of range for dimension ${dim} of size ${size}`);
  }
}

export function gather(x: View, dim: number, index: View, out: View): void {
  const xs = dataOf(x);
  const ids = dataOf(index);
  const o = dataOf(out);
  const { rowLength, bases, steps } = rowWalk(index.shape, [besideDim(x, dim), index]);
  const [xBase, iBase] = bases;
  const [xStep, iStep] = steps;
  const size = x.shape[dim];
  const stride = x.strides[dim];
  for (let r = 0, i = 0; r < xBase.length; r++)
    for (let j = 0; j < rowLength; j++, i++) {
      const id = ids[iBase[r] + j * iStep];
      checkIndex('gather', id, size, dim);
      o[i] = xs[xBase[r] + j * xStep + id * stride];
    }
}

export function scatterAdd(dst: View, dim: number, index: View, src: View): void {
  const d = dataOf(dst);
  const ids = dataOf(index);
  const s = dataOf(src);
  const { rowLength, bases, steps } = rowWalk(index.shape, [besideDim(dst, dim), index, src]);
  const [dBase, iBase, sBase] = bases;
  const [dStep, iStep, sStep] = steps;
  const size = dst.shape[dim];
  const stride = dst.strides[dim];
  for (let r = 0; r < dBase.length; r++)
    for (let j = 0; j < rowLength; j++) {
      const id = ids[iBase[r] + j * iStep];
      checkIndex('scatterAdd', id, size, dim);
      d[dBase[r] + j * dStep + id * stride] += s[sBase[r] + j * sStep];
    }
}

import { sizeOf } from '../../shape.js';
import type { ReduceOp, View } from '../backend.js';
import { dataOf } from './storage.js';
import { elementOffsets } from './strided.js';

/**
 * Splits the view into kept axes (outer) and reduced axes (inner): every output element reduces the inner
 * block found at its outer offset.
 */
export function reduce(op: ReduceOp, x: View, axes: readonly number[], out: View): void {
  const reduced = new Set(axes);
  const outerShape: number[] = [];
  const outerStrides: number[] = [];
  const innerShape: number[] = [];
  const innerStrides: number[] = [];
  x.shape.forEach((d, i) => {
    if (reduced.has(i)) {
      innerShape.push(d);
      innerStrides.push(x.strides[i]);
    } else {
      outerShape.push(d);
      outerStrides.push(x.strides[i]);
    }
  });
  const outer = elementOffsets(outerShape, outerStrides, x.offset);
  const inner = elementOffsets(innerShape, innerStrides, 0);
  const xs = dataOf(x);
  const o = dataOf(out);
  const m = inner.length;
  if (m === 0 && op !== 'sum' && op !== 'prod') {
    throw new Error(`cpu reduce: ${op} of an empty axis has no identity (shape [${x.shape}])`);
  }
  for (let r = 0; r < outer.length; r++) {
    const base = outer[r];
    o[r] = reduceBlock(op, xs, base, inner, m);
  }
  if (outer.length !== sizeOf(out.shape))
    throw new Error('cpu reduce: output size does not match the kept axes');
}

function reduceBlock(
  op: ReduceOp,
  xs: ArrayLike<number>,
  base: number,
  inner: Int32Array,
  m: number,
): number {
  switch (op) {
    case 'sum': {
      let acc = 0;
      for (let j = 0; j < m; j++) acc += xs[base + inner[j]];
      return acc;
    }
    case 'prod': {
      let acc = 1;
      for (let j = 0; j < m; j++) acc *= xs[base + inner[j]];
      return acc;
    }
    case 'max':
    case 'min': {
      let best = xs[base + inner[0]];
      for (let j = 1; j < m; j++) {
        const v = xs[base + inner[j]];
        if (Number.isNaN(v)) return v;
        if (op === 'max' ? v > best : v < best) best = v;
      }
      return best;
    }
    case 'argmax':
    case 'argmin': {
      let best = xs[base + inner[0]];
      let at = 0;
      for (let j = 1; j < m; j++) {
        const v = xs[base + inner[j]];
        if (op === 'argmax' ? v > best : v < best) {
          best = v;
          at = j;
        }
      }
      return at;
    }
  }
}

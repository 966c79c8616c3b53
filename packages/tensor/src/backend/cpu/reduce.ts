import { ARG_REDUCTIONS, VALUE_REDUCTIONS, isArgReduction } from '../../kernel-ir/reduce.js';
import { type ReduceLoop, jsArgReduce, jsReduce } from '../../kernel-ir/render-js.js';
import { sizeOf } from '../../shape.js';
import { REDUCE_OPS, type ReduceOp, type View } from '../backend.js';
import { dataOf } from './storage.js';
import { elementOffsets } from './strided.js';

/** Each reduction's loop, rendered from the kernel IR (kernel-ir/reduce.ts). */
const LOOPS = Object.fromEntries(
  REDUCE_OPS.map((op) => [
    op,
    isArgReduction(op)
      ? jsArgReduce(ARG_REDUCTIONS[op].better)
      : jsReduce(VALUE_REDUCTIONS[op].combine, VALUE_REDUCTIONS[op].identity),
  ]),
) as Record<ReduceOp, ReduceLoop>;

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
  const loop = LOOPS[op];
  for (let r = 0; r < outer.length; r++) o[r] = loop(xs, outer[r], inner, m);
  if (outer.length !== sizeOf(out.shape))
    throw new Error('cpu reduce: output size does not match the kept axes');
}

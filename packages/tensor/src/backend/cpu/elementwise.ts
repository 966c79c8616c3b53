import { isHalf } from '../../dtype.js';
import { toHalfBits } from '../../half.js';
import { sizeOf } from '../../shape.js';
import { BINARY_FUNCTIONS, UNARY_FUNCTIONS, WHERE_FUNCTION } from '../../kernel-ir/elementwise.js';
import { type RunLoop, jsRun } from '../../kernel-ir/render-js.js';
import { BINARY_OPS, type BinaryOp, UNARY_OPS, type UnaryOp, type View } from '../backend.js';
import { halfRunCopier } from './half-copy.js';
import { dataOf } from './storage.js';
import { forEachRun, isDense } from './strided.js';

/**
 * The ops' arithmetic, rendered from the kernel IR (kernel-ir/elementwise.ts) as one JavaScript loop per op
 * (not one loop calling each op's function): the call site of the arithmetic is then monomorphic and
 * inlined, two to three times as fast for the cheap ops.
 */
const UNARY_RUN = Object.fromEntries(UNARY_OPS.map((op) => [op, jsRun(UNARY_FUNCTIONS[op])])) as Record<
  UnaryOp,
  RunLoop
>;
const BINARY_RUN = Object.fromEntries(BINARY_OPS.map((op) => [op, jsRun(BINARY_FUNCTIONS[op])])) as Record<
  BinaryOp,
  RunLoop
>;
const WHERE_RUN = jsRun(WHERE_FUNCTION);

export function fill(out: View, value: number): void {
  if (isHalf(out.dtype)) value = toHalfBits(out.dtype, value);
  const o = dataOf(out);
  forEachRun(out.shape, [out], ([i], n, [step]) => {
    if (step === 1) o.fill(value, i, i + n);
    else for (let k = 0; k < n; k++, i += step) o[i] = value;
  });
}

export function copy(src: View, dst: View): void {
  const s = dataOf(src);
  const d = dataOf(dst);
  const sameType = src.dtype === dst.dtype;
  if (!sameType && (isHalf(src.dtype) || isHalf(dst.dtype))) {
    const copyRun = halfRunCopier(src.dtype, dst.dtype, s, d);
    forEachRun(src.shape, [src, dst], ([i, j], n, [si, sj]) => copyRun(i, si, j, sj, n));
    return;
  }
  forEachRun(src.shape, [src, dst], ([i, j], n, [si, sj]) => {
    // Whole dense runs at once (e.g. a KV cache's heads, each dense over keys × head size).
    if (sameType && si === 1 && sj === 1) d.set(s.subarray(i, i + n), j);
    // int32 destinations truncate toward zero, as a cast does in C and in WGSL.
    else for (let k = 0; k < n; k++, i += si, j += sj) d[j] = s[i];
  });
}

export function unary(op: UnaryOp, x: View, out: View): void {
  const run = UNARY_RUN[op];
  const xs = dataOf(x);
  const o = dataOf(out);
  let at = out.offset;
  forEachRun(out.shape, [x], ([i], n, [step]) => {
    run(xs, i, step, o, at, n);
    at += n;
  });
}

export function binary(op: BinaryOp, a: View, b: View, out: View): void {
  const run = BINARY_RUN[op];
  const as = dataOf(a);
  const bs = dataOf(b);
  const o = dataOf(out);
  if (isDense(a) && isDense(b)) {
    run(as, a.offset, 1, bs, b.offset, 1, o, 0, sizeOf(out.shape));
    return;
  }
  let at = out.offset;
  forEachRun(out.shape, [a, b], ([i, j], count, [si, sj]) => {
    run(as, i, si, bs, j, sj, o, at, count);
    at += count;
  });
}

export function where(cond: View, a: View, b: View, out: View): void {
  const c = dataOf(cond);
  const as = dataOf(a);
  const bs = dataOf(b);
  const o = dataOf(out);
  let at = out.offset;
  forEachRun(out.shape, [cond, a, b], ([h, i, j], n, [sh, si, sj]) => {
    WHERE_RUN(c, h, sh, as, i, si, bs, j, sj, o, at, n);
    at += n;
  });
}

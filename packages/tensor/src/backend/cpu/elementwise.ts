import { isHalf } from '../../dtype.js';
import { toHalfBits } from '../../half.js';
import { sizeOf } from '../../shape.js';
import type { BinaryOp, UnaryOp, View } from '../backend.js';
import { halfRunCopier } from './half-copy.js';
import { dataOf } from './storage.js';
import { forEachRun, isDense } from './strided.js';

const GELU_C = Math.sqrt(2 / Math.PI);

/** GELU, tanh approximation (as in GPT-2); its derivative below. */
function gelu(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x * x * x)));
}

function geluGrad(x: number): number {
  const u = GELU_C * (x + 0.044715 * x * x * x);
  const t = Math.tanh(u);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x);
}

function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

export const UNARY: Record<UnaryOp, (x: number) => number> = {
  neg: (x) => -x,
  abs: Math.abs,
  sign: Math.sign,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  tanh: Math.tanh,
  sigmoid,
  relu: (x) => (x > 0 ? x : 0),
  step: (x) => (x > 0 ? 1 : 0),
  gelu,
  gelu_grad: geluGrad,
  silu: (x) => x * sigmoid(x),
  silu_grad: (x) => {
    const s = sigmoid(x);
    return s * (1 + x * (1 - s));
  },
  sin: Math.sin,
  cos: Math.cos,
  reciprocal: (x) => 1 / x,
  square: (x) => x * x,
  logical_not: (x) => (x ? 0 : 1),
};

export const BINARY: Record<BinaryOp, (a: number, b: number) => number> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  pow: (a, b) => a ** b,
  maximum: (a, b) => (a >= b || Number.isNaN(a) ? a : b),
  minimum: (a, b) => (a <= b || Number.isNaN(a) ? a : b),
  eq: (a, b) => (a === b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
};

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
  const f = UNARY[op];
  const xs = dataOf(x);
  const o = dataOf(out);
  let at = out.offset;
  forEachRun(out.shape, [x], ([i], n, [step]) => {
    for (let k = 0; k < n; k++, i += step) o[at++] = f(xs[i]);
  });
}

export function binary(op: BinaryOp, a: View, b: View, out: View): void {
  const f = BINARY[op];
  const as = dataOf(a);
  const bs = dataOf(b);
  const o = dataOf(out);
  const n = sizeOf(out.shape);
  if (isDense(a) && isDense(b)) {
    const ab = a.offset;
    const bb = b.offset;
    if (op === 'add') for (let i = 0; i < n; i++) o[i] = as[ab + i] + bs[bb + i];
    else if (op === 'mul') for (let i = 0; i < n; i++) o[i] = as[ab + i] * bs[bb + i];
    else for (let i = 0; i < n; i++) o[i] = f(as[ab + i], bs[bb + i]);
    return;
  }
  let at = out.offset;
  forEachRun(out.shape, [a, b], ([i, j], count, [si, sj]) => {
    if (op === 'add') for (let k = 0; k < count; k++, i += si, j += sj) o[at++] = as[i] + bs[j];
    else if (op === 'mul') for (let k = 0; k < count; k++, i += si, j += sj) o[at++] = as[i] * bs[j];
    else for (let k = 0; k < count; k++, i += si, j += sj) o[at++] = f(as[i], bs[j]);
  });
}

export function where(cond: View, a: View, b: View, out: View): void {
  const c = dataOf(cond);
  const as = dataOf(a);
  const bs = dataOf(b);
  const o = dataOf(out);
  let at = out.offset;
  forEachRun(out.shape, [cond, a, b], ([h, i, j], n, [sh, si, sj]) => {
    for (let k = 0; k < n; k++, h += sh, i += si, j += sj) o[at++] = c[h] ? as[i] : bs[j];
  });
}

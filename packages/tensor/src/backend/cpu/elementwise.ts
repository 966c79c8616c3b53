import { sizeOf } from '../../shape.js';
import type { BinaryOp, UnaryOp, View } from '../backend.js';
import { dataOf } from './storage.js';
import { elementOffsets, isDense, viewOffsets } from './strided.js';

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
  const o = dataOf(out);
  if (isDense(out)) o.fill(value, out.offset, out.offset + sizeOf(out.shape));
  else for (const i of viewOffsets(out)) o[i] = value;
}

/** The trailing axes laid out densely in both views: how many there are and how many elements they hold. */
function denseTail(shape: readonly number[], a: View, b: View): { axes: number; size: number } {
  let size = 1;
  let axis = shape.length;
  while (
    axis > 0 &&
    (shape[axis - 1] === 1 || (a.strides[axis - 1] === size && b.strides[axis - 1] === size))
  ) {
    size *= shape[axis - 1];
    axis--;
  }
  return { axes: shape.length - axis, size };
}

export function copy(src: View, dst: View): void {
  const s = dataOf(src);
  const d = dataOf(dst);
  const shape = src.shape;
  const { axes, size } = denseTail(shape, src, dst);
  if (src.dtype === dst.dtype && size > 1) {
    // Whole dense blocks at a time (e.g. a KV cache's heads, each dense over keys × head size).
    const outer = shape.length - axes;
    const so = elementOffsets(shape.slice(0, outer), src.strides.slice(0, outer), src.offset);
    const dO = elementOffsets(shape.slice(0, outer), dst.strides.slice(0, outer), dst.offset);
    for (let i = 0; i < so.length; i++) d.set(s.subarray(so[i], so[i] + size), dO[i]);
    return;
  }
  const so = viewOffsets(src);
  const dO = viewOffsets(dst);
  // int32 destinations truncate toward zero, as a cast does in C and in WGSL.
  for (let i = 0; i < so.length; i++) d[dO[i]] = s[so[i]];
}

export function unary(op: UnaryOp, x: View, out: View): void {
  const f = UNARY[op];
  const xs = dataOf(x);
  const o = dataOf(out);
  const n = sizeOf(out.shape);
  if (isDense(x)) {
    const base = x.offset;
    for (let i = 0; i < n; i++) o[i] = f(xs[base + i]);
    return;
  }
  const xo = viewOffsets(x);
  for (let i = 0; i < n; i++) o[i] = f(xs[xo[i]]);
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
  const ao = viewOffsets(a);
  const bo = viewOffsets(b);
  for (let i = 0; i < n; i++) o[i] = f(as[ao[i]], bs[bo[i]]);
}

export function where(cond: View, a: View, b: View, out: View): void {
  const c = dataOf(cond);
  const as = dataOf(a);
  const bs = dataOf(b);
  const o = dataOf(out);
  const co = viewOffsets(cond);
  const ao = viewOffsets(a);
  const bo = viewOffsets(b);
  for (let i = 0; i < co.length; i++) o[i] = c[co[i]] ? as[ao[i]] : bs[bo[i]];
}

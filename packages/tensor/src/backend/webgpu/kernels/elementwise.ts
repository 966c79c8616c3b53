/**
 * fill, copy, unary, binary and where as expressions for the map kernel. Float math follows the CPU
 * reference's definitions (the tanh-approximated GELU, the sign-split sigmoid, NaN-propagating max/min);
 * integer ops stay in i32 so they wrap as an Int32Array store does.
 */
import { isHalf } from '../../../dtype.js';
import { toHalfBits } from '../../../half.js';
import type { BinaryOp, UnaryOp, View } from '../../backend.js';
import type { GpuQueue } from '../queue.js';
import { INF, IS_NAN, storageType } from '../wgsl.js';
import { convert, launchMap } from './map.js';

const FLOAT_PRELUDE = /* wgsl */ `
${IS_NAN}
${INF}
// tanh through exp(-2|x|): never overflows (a naive (e^2x - 1)/(e^2x + 1) gives NaN for large x).
fn tanh_s(x: f32) -> f32 {
  if (abs(x) < 0.5) { return tanh(x); }
  let t = exp(-2.0 * abs(x));
  return sign(x) * (1.0 - t) / (1.0 + t);
}
fn sigmoid_s(x: f32) -> f32 {
  if (x >= 0.0) { return 1.0 / (1.0 + exp(-x)); }
  let e = exp(x);
  return e / (1.0 + e);
}
const GELU_C: f32 = 0.7978845608028654;
fn gelu_s(x: f32) -> f32 { return 0.5 * x * (1.0 + tanh_s(GELU_C * (x + 0.044715 * x * x * x))); }
fn gelu_grad_s(x: f32) -> f32 {
  let t = tanh_s(GELU_C * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * 0.044715 * x * x);
}
fn pow_s(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return 1.0; }
  if (is_nan(a) || is_nan(b)) { return nan_f(); }
  let m = exp2(b * log2(abs(a)));
  if (a >= 0.0) { return m; }
  if (floor(b) != b) { return nan_f(); }
  // A negative base to an integer power: odd powers keep the sign.
  return select(m, -m, abs(b) < 16777216.0 && (i32(abs(b)) & 1) == 1);
}
fn max_s(a: f32, b: f32) -> f32 { if (a >= b || is_nan(a)) { return a; } return b; }
fn min_s(a: f32, b: f32) -> f32 { if (a <= b || is_nan(a)) { return a; } return b; }
`;

const INT_PRELUDE = /* wgsl */ `
fn div_i(a: i32, b: i32) -> i32 { if (b == 0) { return 0; } return a / b; }
// JS a ** b truncated into an Int32Array: exact for results in range; negative powers give 0 unless |a| is 1.
fn pow_i(a: i32, b: i32) -> i32 {
  if (b < 0) {
    if (a == 1) { return 1; }
    if (a == -1) { return select(1, -1, (b & 1) != 0); }
    return 0;
  }
  var r = 1; var base = a; var e = b;
  loop { if (e == 0) { break; } if ((e & 1) != 0) { r = r * base; } base = base * base; e = e >> 1u; }
  return r;
}
`;

const UNARY_F32: Record<UnaryOp, string> = {
  neg: '-x',
  abs: 'abs(x)',
  sign: 'sign(x)',
  exp: 'exp(x)',
  log: 'log(x)',
  sqrt: 'sqrt(x)',
  rsqrt: '1.0 / sqrt(x)',
  tanh: 'tanh_s(x)',
  sigmoid: 'sigmoid_s(x)',
  relu: 'select(0.0, x, x > 0.0)',
  step: 'select(0.0, 1.0, x > 0.0)',
  gelu: 'gelu_s(x)',
  gelu_grad: 'gelu_grad_s(x)',
  silu: 'x * sigmoid_s(x)',
  silu_grad: '(sigmoid_s(x) * (1.0 + x * (1.0 - sigmoid_s(x))))',
  sin: 'sin(x)',
  cos: 'cos(x)',
  reciprocal: '1.0 / x',
  square: 'x * x',
  logical_not: 'select(0.0, 1.0, x == 0.0)',
};

/** Integer forms where they are exact; the rest compute in f32 and convert back. */
const UNARY_INT: Partial<Record<UnaryOp, string>> = {
  neg: '-x',
  abs: 'abs(x)',
  sign: 'sign(x)',
  relu: 'max(x, 0)',
  step: 'select(0, 1, x > 0)',
  square: 'x * x',
  logical_not: 'select(0, 1, x == 0)',
};

const BINARY_F32: Record<BinaryOp, string> = {
  add: 'a + b',
  sub: 'a - b',
  mul: 'a * b',
  div: 'a / b',
  pow: 'pow_s(a, b)',
  maximum: 'max_s(a, b)',
  minimum: 'min_s(a, b)',
  eq: 'a == b',
  ne: 'a != b',
  lt: 'a < b',
  le: 'a <= b',
  gt: 'a > b',
  ge: 'a >= b',
};

const BINARY_INT: Record<BinaryOp, string> = {
  ...BINARY_F32,
  div: 'div_i(a, b)',
  pow: 'pow_i(a, b)',
  maximum: 'max(a, b)',
  minimum: 'min(a, b)',
};

const COMPARE = new Set<BinaryOp>(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);

export function fill(queue: GpuQueue, out: View, value: number): void {
  const t = storageType(out.dtype);
  const read = t === 'f32' ? 'pf(EXTRA)' : t === 'i32' ? 'pi(EXTRA)' : 'pu(EXTRA)';
  const dtype = out.dtype;
  // A half type's value arrives as its bits, rounded here as the CPU backend rounds it.
  const word = isHalf(dtype) ? toHalfBits(dtype, value) : value ? 1 : 0;
  launchMap(queue, {
    name: 'fill',
    inputs: [],
    out,
    expr: read,
    extra: (p) => (t === 'f32' ? p.f32s(value) : t === 'i32' ? p.i32s(value) : p.u32(word)),
  });
}

export function copy(queue: GpuQueue, src: View, dst: View): void {
  launchMap(queue, { name: 'copy', inputs: [src], out: dst, expr: convert('x0', src.dtype, dst.dtype) });
}

export function unary(queue: GpuQueue, op: UnaryOp, x: View, out: View): void {
  const t = storageType(x.dtype);
  let expr: string;
  let prelude = '';
  if (t === 'f32') {
    expr = UNARY_F32[op].replaceAll(/\bx\b/g, 'x0');
    prelude = FLOAT_PRELUDE;
  } else if (UNARY_INT[op]) {
    const body = UNARY_INT[op]!.replaceAll(/\bx\b/g, t === 'u32' ? 'i32(x0)' : 'x0');
    expr = t === 'u32' ? `u32(${body})` : body;
  } else {
    expr = convert(`(${UNARY_F32[op].replaceAll(/\bx\b/g, 'f32(x0)')})`, 'float32', x.dtype);
    prelude = FLOAT_PRELUDE;
  }
  if (out.dtype !== x.dtype) expr = convert(`(${expr})`, x.dtype, out.dtype);
  launchMap(queue, { name: `unary ${op}`, inputs: [x], out, expr, prelude });
}

export function binary(queue: GpuQueue, op: BinaryOp, a: View, b: View, out: View): void {
  const t = storageType(a.dtype);
  const table = t === 'f32' ? BINARY_F32 : BINARY_INT;
  // Bools (u32) only meet comparisons and max/min here; arithmetic on bools is promoted to int32 above us.
  const args = t === 'u32' && !COMPARE.has(op) ? ['i32(x0)', 'i32(x1)'] : ['x0', 'x1'];
  let expr = table[op].replaceAll(/\ba\b/g, args[0]).replaceAll(/\bb\b/g, args[1]);
  if (COMPARE.has(op)) expr = `select(0u, 1u, ${expr})`;
  else if (t === 'u32') expr = `u32(${expr})`;
  if (!COMPARE.has(op) && out.dtype !== a.dtype) expr = convert(`(${expr})`, a.dtype, out.dtype);
  launchMap(queue, {
    name: `binary ${op}`,
    inputs: [a, b],
    out,
    expr,
    prelude: t === 'f32' ? FLOAT_PRELUDE : INT_PRELUDE,
  });
}

export function where(queue: GpuQueue, cond: View, a: View, b: View, out: View): void {
  const c =
    storageType(cond.dtype) === 'f32'
      ? 'x0 != 0.0'
      : storageType(cond.dtype) === 'i32'
        ? 'x0 != 0'
        : 'x0 != 0u';
  const pick = `select(${convert('x2', b.dtype, out.dtype)}, ${convert('x1', a.dtype, out.dtype)}, ${c})`;
  launchMap(queue, { name: 'where', inputs: [cond, a, b], out, expr: pick });
}

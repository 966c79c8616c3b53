/**
 * fill, copy, unary, binary and where as expressions for the map kernel. The ops' arithmetic is the kernel
 * IR's (kernel-ir/elementwise.ts), rendered as WGSL functions by kernel-ir/render-wgsl.ts: in f32 for float
 * views, in i32 for the integer forms (int32 and bool views), so they wrap as an Int32Array store does;
 * an integer view of an op without an integer form computes in f32 and converts back.
 */
import { isHalf } from '../../../dtype.js';
import { toHalfBits } from '../../../half.js';
import {
  BINARY_FUNCTIONS,
  INTEGER_UNARY_OPS,
  UNARY_FUNCTIONS,
  WHERE_FUNCTION,
} from '../../../kernel-ir/elementwise.js';
import type { ScalarFunction } from '../../../kernel-ir/expr.js';
import { WGSL_PRELUDE, type WgslScalar, wgslFunction } from '../../../kernel-ir/render-wgsl.js';
import type { BinaryOp, UnaryOp, View } from '../../backend.js';
import type { GpuQueue } from '../queue.js';
import { storageType } from '../wgsl.js';
import { convert, launchMap } from './map.js';

const COMPARE = new Set<BinaryOp>(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);

/** The prelude defining `op_<name>` in `type` (with the helpers it may call), and a call of it. */
function rendered(f: ScalarFunction, type: WgslScalar, args: readonly string[]) {
  const name = `op_${f.name}`;
  return {
    prelude: `${WGSL_PRELUDE[type]}\n${wgslFunction(f, type, name)}`,
    call: `${name}(${args.join(', ')})`,
  };
}

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
  const f = UNARY_FUNCTIONS[op];
  let expr: string;
  let prelude: string;
  if (t === 'f32') {
    ({ prelude, call: expr } = rendered(f, 'f32', ['x0']));
  } else if (INTEGER_UNARY_OPS.includes(op)) {
    const r = rendered(f, 'i32', [t === 'u32' ? 'i32(x0)' : 'x0']);
    prelude = r.prelude;
    expr = t === 'u32' ? `u32(${r.call})` : r.call;
  } else {
    const r = rendered(f, 'f32', ['f32(x0)']);
    prelude = r.prelude;
    expr = convert(`(${r.call})`, 'float32', x.dtype);
  }
  if (out.dtype !== x.dtype) expr = convert(`(${expr})`, x.dtype, out.dtype);
  launchMap(queue, { name: `unary ${op}`, inputs: [x], out, expr, prelude });
}

export function binary(queue: GpuQueue, op: BinaryOp, a: View, b: View, out: View): void {
  const t = storageType(a.dtype);
  // Bools (u32) only meet comparisons and max/min here; arithmetic on bools is promoted to int32 above us.
  const args = t === 'u32' ? ['i32(x0)', 'i32(x1)'] : ['x0', 'x1'];
  const { prelude, call } = rendered(BINARY_FUNCTIONS[op], t === 'f32' ? 'f32' : 'i32', args);
  let expr = call;
  if (COMPARE.has(op)) expr = `select(0u, 1u, ${expr})`;
  else if (t === 'u32') expr = `u32(${expr})`;
  if (!COMPARE.has(op) && out.dtype !== a.dtype) expr = convert(`(${expr})`, a.dtype, out.dtype);
  launchMap(queue, { name: `binary ${op}`, inputs: [a, b], out, expr, prelude });
}

export function where(queue: GpuQueue, cond: View, a: View, b: View, out: View): void {
  const t = storageType(out.dtype);
  const type: WgslScalar = t === 'f32' ? 'f32' : 'i32';
  const branch = (x: string, v: View) => {
    const value = convert(x, v.dtype, out.dtype);
    return t === 'u32' ? `i32(${value})` : value;
  };
  const { prelude, call } = rendered(WHERE_FUNCTION, type, [`${type}(x0)`, branch('x1', a), branch('x2', b)]);
  const expr = t === 'u32' ? `u32(${call})` : call;
  launchMap(queue, { name: 'where', inputs: [cond, a, b], out, expr, prelude });
}

/** Elementwise ops with NumPy broadcasting, each with its gradient. */
import { record } from '../autograd.js';
import type { BinaryOp, CompareOp, UnaryOp } from '../backend/backend.js';
import { type DType, floatTypeOf, isFloat, promoteTypes } from '../dtype.js';
import { broadcastShapes } from '../shape.js';
import type { Tensor, TensorOrScalar } from '../tensor.js';
import { broadcastView, checkSameDevice, empty, operand, scalarDtype } from './internal.js';
import { sumToShape } from './reduce.js';

export function cast(x: Tensor, dtype: DType): Tensor {
  if (x.dtype === dtype) return x.clone();
  // A plain copy into a byte would keep 2 as 2 and turn 0.5 or 256 into 0; bool means "not zero".
  if (dtype === 'bool') return ne(x, 0);
  const out = empty(x.backend, x.shape, dtype);
  x.backend.kernels.copy(x, out);
  if (!isFloat(dtype)) return out;
  return record('cast', out, [x], (g) => [g.cast(x.dtype)]);
}

/** Runs a unary kernel; float ops on ints compute in float32. */
function unaryPrimitive(op: UnaryOp, x: Tensor, dtype: DType = floatTypeOf(x.dtype)): Tensor {
  const input = x.dtype === dtype ? x : cast(x, dtype);
  const out = empty(x.backend, x.shape, dtype);
  x.backend.kernels.unary(op, input, out);
  if (input !== x) input.dispose();
  return out;
}

/** Broadcasts, promotes dtypes, and runs a binary kernel. */
function binaryPrimitive(op: BinaryOp, a: Tensor, b: Tensor, dtype: DType): Tensor {
  checkSameDevice(op, [a, b]);
  const shape = broadcastShapes(op, a.shape, b.shape);
  const ac = a.dtype === dtype ? a : cast(a, dtype);
  const bc = b.dtype === dtype ? b : cast(b, dtype);
  const isCompare = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'].includes(op);
  const out = empty(a.backend, shape, isCompare ? 'bool' : dtype);
  a.backend.kernels.binary(op, broadcastView(ac, shape), broadcastView(bc, shape), out);
  if (ac !== a) ac.dispose();
  if (bc !== b) bc.dispose();
  return out;
}

function operands(a: TensorOrScalar, b: TensorOrScalar): [Tensor, Tensor, () => void] {
  if (typeof a === 'number' && typeof b === 'number')
    throw new Error('binary op: at least one operand must be a tensor');
  const ta = typeof a === 'number' ? operand(a, b as Tensor) : a;
  const tb = operand(b, ta);
  const release = () => {
    if (ta !== a) ta.dispose();
    if (tb !== b) tb.dispose();
  };
  return [ta, tb, release];
}

function resultDtype(a: Tensor, b: Tensor): DType {
  return promoteTypes(a.dtype, b.dtype);
}

/** Arithmetic on two bools counts in int32 (true + true = 2), as NumPy's sum of bools does. */
function arithmeticDtype(a: Tensor, b: Tensor): DType {
  const dtype = resultDtype(a, b);
  return dtype === 'bool' ? 'int32' : dtype;
}

/** A binary op: its kernel, its result dtype, and its gradient with respect to a and b. */
function binary(
  op: BinaryOp,
  dtypeOf: (a: Tensor, b: Tensor) => DType,
  grad: (g: Tensor, a: Tensor, b: Tensor, out: Tensor, needs: boolean[]) => [Tensor | null, Tensor | null],
  saves: 'inputs' | 'inputs+out' = 'inputs',
) {
  return (x: TensorOrScalar, y: TensorOrScalar): Tensor => {
    const [a, b, release] = operands(x, y);
    const dtype = dtypeOf(a, b);
    // The graph records the promoted operands, so a gradient reaches each input through its cast, in
    // the input's own dtype (a float32 leaf added to a float64 tensor gets a float32 gradient).
    const ac = a.dtype === dtype ? a : cast(a, dtype);
    const bc = b.dtype === dtype ? b : cast(b, dtype);
    const out = binaryPrimitive(op, ac, bc, dtype);
    const result = record(
      op,
      out,
      [ac, bc],
      (g, saved, needs) => {
        const [sa, sb, so] = saved;
        const [ga, gb] = grad(g, sa, sb, so, needs);
        return [ga && sumToShape(ga, sa.shape), gb && sumToShape(gb, sb.shape)];
      },
      saves === 'inputs' ? [ac, bc] : [ac, bc, out],
    );
    if (ac !== a) ac.dispose();
    if (bc !== b) bc.dispose();
    release();
    return result;
  };
}

const floatResult = (a: Tensor, b: Tensor) => floatTypeOf(resultDtype(a, b));

export const add = binary('add', arithmeticDtype, (g) => [g, g]);
export const sub = binary('sub', arithmeticDtype, (g, _a, _b, _o, needs) => [g, needs[1] ? g.neg() : null]);
export const mul = binary('mul', arithmeticDtype, (g, a, b, _o, needs) => [
  needs[0] ? g.mul(b) : null,
  needs[1] ? g.mul(a) : null,
]);
export const div = binary('div', floatResult, (g, a, b, _o, needs) => [
  needs[0] ? g.div(b) : null,
  needs[1] ? g.mul(a).div(b.square()).neg() : null,
]);
export const pow = binary(
  'pow',
  floatResult,
  (g, a, b, out, needs) => [
    // d(a^b)/da = b a^(b-1), which is 0 where b = 0 (a^0 is constant), also at a = 0 where 0 * 0^-1 is NaN.
    needs[0] ? where(b.eq(0), 0, g.mul(b).mul(a.pow(b.sub(1)))) : null,
    // d(a^b)/db = a^b log a, taken as 0 where a <= 0 (where the real power is undefined or constant).
    needs[1] ? where(a.gt(0), g.mul(out).mul(a.log()), 0) : null,
  ],
  'inputs+out',
);

/** Where a and b tie, each gets half the gradient (so the gradient is symmetric and sums to g). */
function tieSplit(g: Tensor, first: Tensor, second: Tensor, wins: Tensor): Tensor {
  return g.mul(wins.cast(g.dtype).add(first.eq(second).cast(g.dtype).mul(0.5)));
}
export const maximum = binary('maximum', arithmeticDtype, (g, a, b) => [
  tieSplit(g, a, b, a.gt(b)),
  tieSplit(g, b, a, b.gt(a)),
]);
export const minimum = binary('minimum', arithmeticDtype, (g, a, b) => [
  tieSplit(g, a, b, a.lt(b)),
  tieSplit(g, b, a, b.lt(a)),
]);

function compare(op: CompareOp) {
  return (x: TensorOrScalar, y: TensorOrScalar): Tensor => {
    const [a, b, release] = operands(x, y);
    const out = binaryPrimitive(op, a, b, resultDtype(a, b));
    release();
    return out;
  };
}
export const eq = compare('eq');
export const ne = compare('ne');
export const lt = compare('lt');
export const le = compare('le');
export const gt = compare('gt');
export const ge = compare('ge');

/** A unary op: its kernel and its gradient, from the input x and/or the output y. */
function unary(op: UnaryOp, grad: (g: Tensor, x: Tensor, y: Tensor) => Tensor) {
  return (x: Tensor): Tensor => {
    const out = unaryPrimitive(
      op,
      x,
      op === 'neg' || op === 'abs' || op === 'square' ? x.dtype : floatTypeOf(x.dtype),
    );
    return record(op, out, [x], (g, [sx, sy]) => [grad(g, sx, sy)], [x, out]);
  };
}

export const neg = unary('neg', (g) => g.neg());
export const abs = unary('abs', (g, x) => g.mul(unaryPrimitive('sign', x)));
export const exp = unary('exp', (g, _x, y) => g.mul(y));
export const log = unary('log', (g, x) => g.div(x));
export const sqrt = unary('sqrt', (g, _x, y) => g.div(y.mul(2)));
export const rsqrt = unary('rsqrt', (g, _x, y) => g.mul(y.pow(3)).mul(-0.5));
export const square = unary('square', (g, x) => g.mul(x).mul(2));
export const tanh = unary('tanh', (g, _x, y) => g.mul(y.square().neg().add(1)));
export const sigmoid = unary('sigmoid', (g, _x, y) => g.mul(y).mul(y.neg().add(1)));
export const relu = unary('relu', (g, x) => g.mul(unaryPrimitive('step', x, g.dtype)));
export const gelu = unary('gelu', (g, x) => g.mul(unaryPrimitive('gelu_grad', x, g.dtype)));
export const silu = unary('silu', (g, x) => g.mul(unaryPrimitive('silu_grad', x, g.dtype)));
export const softplus = unary('softplus', (g, x) => g.mul(x.sigmoid()));
export const sin = unary('sin', (g, x) => g.mul(x.cos()));
export const cos = unary('cos', (g, x) => g.mul(x.sin()).neg());

export function logicalNot(x: Tensor): Tensor {
  return unaryPrimitive('logical_not', x, 'bool');
}

/** Picks a where cond is true, else b; cond is a bool tensor, a and b broadcast with it. */
export function where(cond: Tensor, x: TensorOrScalar, y: TensorOrScalar): Tensor {
  const a = typeof x === 'number' ? operand(x, typeof y === 'number' ? cond : y) : x;
  const b = operand(y, a);
  const dtype = resultDtype(a, b);
  checkSameDevice('where', [cond, a, b]);
  const shape = broadcastShapes('where', cond.shape, a.shape, b.shape);
  const [ac, bc] = [a, b].map((t) => (t.dtype === dtype ? t : cast(t, dtype)));
  const c = cond.dtype === 'bool' ? cond : cond.ne(0);
  const out = empty(a.backend, shape, dtype);
  a.backend.kernels.where(broadcastView(c, shape), broadcastView(ac, shape), broadcastView(bc, shape), out);
  const result = record(
    'where',
    out,
    [ac, bc],
    (g, [sc, sa, sb], needs) => [
      needs[0] ? sumToShape(where(sc, g, 0), sa.shape) : null,
      needs[1] ? sumToShape(where(sc, 0, g), sb.shape) : null,
    ],
    [c, ac, bc],
  );
  for (const t of new Set([ac, bc, c, a, b])) if (t !== x && t !== y && t !== cond) t.dispose();
  return result;
}

/** Limits values to [min, max]; the gradient passes where the value was inside (bounds included). */
export function clamp(x: Tensor, min?: number, max?: number): Tensor {
  const lo = min ?? Number.NEGATIVE_INFINITY;
  const hi = max ?? Number.POSITIVE_INFINITY;
  const dtype = x.dtype;
  const [l, h] = [operand(lo, x), operand(hi, x)];
  const low = binaryPrimitive('maximum', x, l, promoteTypes(dtype, scalarDtype(lo, dtype)));
  const out = binaryPrimitive('minimum', low, h, low.dtype);
  for (const t of [l, h, low]) t.dispose();
  return record('clamp', out, [x], (g, [sx]) => [where(sx.ge(lo), where(sx.le(hi), g, 0), 0)], [x]);
}

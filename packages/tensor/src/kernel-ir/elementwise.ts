/**
 * The arithmetic of every unary and binary op, once, for every backend (see ./expr.ts). Adding an op is its
 * name in backend/backend.ts, one entry here, and its forward and gradient in ops/ (docs/adding-an-op.md).
 *
 * Where two formulas are equal in exact arithmetic, the one kept is the one with no cancellation and no
 * overflow on a float32 target: sigmoid as 1 / (1 + e^−x) (e^−x overflowing to Infinity gives 0), GELU
 * as x·σ(2u) rather than x·(1 + tanh u)/2, which cancels for negative x.
 */
import type { BinaryOp, UnaryOp } from '../backend/backend.js';
import {
  type Expr,
  type ScalarFunction,
  abs,
  add,
  cos,
  div,
  eq,
  exp,
  ge,
  gt,
  isnan,
  le,
  log,
  lt,
  mul,
  ne,
  neg,
  or,
  pow,
  scalarFunction,
  select,
  sign,
  sin,
  sqrt,
  sub,
  tanh,
  truthy,
} from './expr.js';

const GELU_C = Math.sqrt(2 / Math.PI);
const GELU_K = 0.044715;

const sigmoid = (x: Expr) => div(1, add(1, exp(neg(x))));

/** GELU's gate s = σ(2u) = 1 / (1 + e^(u·(−2))), u = C·(x + K·x³), from x and x². */
function geluGate(bind: (e: Expr) => Expr, x: Expr, x2: Expr): Expr {
  const u = mul(add(x, mul(mul(x2, GELU_K), x)), GELU_C);
  return bind(div(1, add(1, exp(mul(u, -2)))));
}

const unary = (name: UnaryOp, body: (bind: (e: Expr) => Expr, x: Expr) => Expr | number) =>
  scalarFunction(name, 1, body);
const binary = (name: BinaryOp, body: (a: Expr, b: Expr) => Expr) =>
  scalarFunction(name, 2, (_, a, b) => body(a, b));

export const UNARY_FUNCTIONS: Record<UnaryOp, ScalarFunction> = {
  neg: unary('neg', (_, x) => neg(x)),
  abs: unary('abs', (_, x) => abs(x)),
  sign: unary('sign', (_, x) => sign(x)),
  exp: unary('exp', (_, x) => exp(x)),
  log: unary('log', (_, x) => log(x)),
  sqrt: unary('sqrt', (_, x) => sqrt(x)),
  rsqrt: unary('rsqrt', (_, x) => div(1, sqrt(x))),
  tanh: unary('tanh', (_, x) => tanh(x)),
  sigmoid: unary('sigmoid', (_, x) => sigmoid(x)),
  relu: unary('relu', (_, x) => select(gt(x, 0), x, 0)),
  step: unary('step', (_, x) => select(gt(x, 0), 1, 0)),
  gelu: unary('gelu', (bind, x) => mul(x, geluGate(bind, x, bind(mul(x, x))))),
  // d/dx x·σ(2u) = s + 2x·s·(1 − s)·u′, u′ = C·(1 + 3K·x²).
  gelu_grad: unary('gelu_grad', (bind, x) => {
    const x2 = bind(mul(x, x));
    const s = geluGate(bind, x, x2);
    return add(s, mul(mul(mul(mul(x, 2 * GELU_C), s), sub(1, s)), add(1, mul(x2, 3 * GELU_K))));
  }),
  silu: unary('silu', (_, x) => mul(x, sigmoid(x))),
  silu_grad: unary('silu_grad', (bind, x) => {
    const s = bind(sigmoid(x));
    return mul(s, add(1, mul(x, sub(1, s))));
  }),
  sin: unary('sin', (_, x) => sin(x)),
  cos: unary('cos', (_, x) => cos(x)),
  reciprocal: unary('reciprocal', (_, x) => div(1, x)),
  square: unary('square', (_, x) => mul(x, x)),
  logical_not: unary('logical_not', (_, x) => select(truthy(x), 0, 1)),
  // log(1 + eˣ) as max(x, 0) + log(1 + e^−|x|): e^−|x| ≤ 1, so nothing overflows.
  softplus: unary('softplus', (_, x) => add(select(gt(x, 0), x, 0), log(add(1, exp(neg(abs(x))))))),
};

export const BINARY_FUNCTIONS: Record<BinaryOp, ScalarFunction> = {
  add: binary('add', add),
  sub: binary('sub', sub),
  mul: binary('mul', mul),
  div: binary('div', div),
  pow: binary('pow', pow),
  // NaN wins when it is the first operand (a >= b is false for NaN, so NaN must be asked for).
  maximum: binary('maximum', (a, b) => select(or(ge(a, b), isnan(a)), a, b)),
  minimum: binary('minimum', (a, b) => select(or(le(a, b), isnan(a)), a, b)),
  eq: binary('eq', eq),
  ne: binary('ne', ne),
  lt: binary('lt', lt),
  le: binary('le', le),
  gt: binary('gt', gt),
  ge: binary('ge', ge),
};

/** where(c, a, b): a where c is true (neither 0 nor NaN), else b. */
export const WHERE_FUNCTION = scalarFunction('where', 3, (_, c, a, b) => select(truthy(c), a, b));

/** The unary ops with an integer form: they read and write int32 (or bool) without a float in between. */
export const INTEGER_UNARY_OPS: readonly UnaryOp[] = [
  'neg',
  'abs',
  'sign',
  'square',
  'relu',
  'step',
  'logical_not',
];

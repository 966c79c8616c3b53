/**
 * Renders a scalar function as a CUDA C device function over float, double or int (bool views compute in
 * int). Floats keep JavaScript's NaN and pow cases (nvcc compiles without fast math, so x != x tests NaN);
 * ints wrap through unsigned arithmetic as an Int32Array store does (no signed-overflow UB), and a division
 * by 0 gives 0. A number literal in an int function must be an integer. The helpers it calls (ar1_ipow,
 * ar1_nan_*, ar1_inf_*) are in the kernels' common prelude.
 */
import type { DType } from '../dtype.js';
import type { CastStep } from './casts.js';
import { type Expr, type Prim, type ScalarFunction, isBool, memoized, renderText } from './expr.js';
import type { IndexDialect } from './walk.js';

export type CScalar = 'float32' | 'float64' | 'int32';

const C_NAME: Record<CScalar, string> = { float32: 'float', float64: 'double', int32: 'int' };

/** The comparisons and `or` as C writes them (WGSL writes them alike). */
export const C_COMPARE: Partial<Record<Prim, string>> = {
  eq: '==',
  ne: '!=',
  lt: '<',
  le: '<=',
  gt: '>',
  ge: '>=',
  or: '||',
};

const MATH: Partial<Record<Prim, string>> = {
  abs: 'fabs',
  exp: 'exp',
  log: 'log',
  sqrt: 'sqrt',
  tanh: 'tanh',
  sin: 'sin',
  cos: 'cos',
};

/** A constant in `type`; in int, ±Infinity stands for the type's extremes (a reduction's identity). */
export function cLiteral(v: number, type: CScalar): string {
  if (type === 'int32') {
    if (v === Number.POSITIVE_INFINITY) return '2147483647';
    if (v === Number.NEGATIVE_INFINITY) return '(-2147483647 - 1)';
    if (!Number.isInteger(v)) throw new Error(`kernel IR: ${v} in an int C function`);
    return `${v}`;
  }
  const f = type === 'float32' ? 'f' : 'd';
  if (Number.isNaN(v)) return `ar1_nan_${f}()`;
  if (!Number.isFinite(v)) return `${v < 0 ? '-' : ''}ar1_inf_${f}()`;
  const s = String(Math.abs(v));
  const text = `${/[.e]/.test(s) ? s : `${s}.0`}${type === 'float32' ? 'f' : ''}`;
  return v < 0 || Object.is(v, -0) ? `(-${text})` : text;
}

const wrap = (op: string, a: string, b: string) => `(int)((unsigned int)${a} ${op} (unsigned int)${b})`;

function intCall(prim: Prim, [a, b]: string[]): string | undefined {
  switch (prim) {
    case 'neg':
      return `(int)(0u - (unsigned int)${a})`;
    case 'abs':
      return `(${a} < 0 ? (int)(0u - (unsigned int)${a}) : ${a})`;
    case 'sign':
      return `((${a} > 0) - (${a} < 0))`;
    case 'add':
      return wrap('+', a, b);
    case 'sub':
      return wrap('-', a, b);
    case 'mul':
      return wrap('*', a, b);
    // Truncated, 0 for a zero divisor, and −2³¹ / −1 wraps.
    case 'div':
      return `(${b} == 0 ? 0 : ${b} == -1 ? (int)(0u - (unsigned int)${a}) : ${a} / ${b})`;
    case 'pow':
      return `ar1_ipow(${a}, ${b})`;
    case 'isnan':
      return 'false';
    case 'truthy':
      return `(${a} != 0)`;
  }
  return undefined;
}

function floatCall(prim: Prim, [a, b]: string[], type: CScalar): string | undefined {
  const f = type === 'float32' ? 'f' : '';
  const one = cLiteral(1, type);
  const zero = cLiteral(0, type);
  const math = MATH[prim];
  if (math) return `${math}${f}(${a})`;
  switch (prim) {
    case 'neg':
      return `(-${a})`;
    // Math.sign returns x itself for 0, −0 and NaN.
    case 'sign':
      return `(${a} > ${zero} ? ${one} : (${a} < ${zero} ? -${one} : ${a}))`;
    case 'add':
      return `(${a} + ${b})`;
    case 'sub':
      return `(${a} - ${b})`;
    case 'mul':
      return `(${a} * ${b})`;
    case 'div':
      return `(${a} / ${b})`;
    // JavaScript's ** gives NaN for a NaN exponent and for (±1) ** ±Infinity, where C's pow gives 1.
    case 'pow': {
      const inf = cLiteral(Number.POSITIVE_INFINITY, type);
      const nan = cLiteral(Number.NaN, type);
      return `((${b} != ${b} || (fabs${f}(${a}) == ${one} && fabs${f}(${b}) == ${inf})) ? ${nan} : pow${f}(${a}, ${b}))`;
    }
    case 'isnan':
      return `(${a} != ${a})`;
    case 'truthy':
      return `(${a} != ${zero} && ${a} == ${a})`;
  }
  return undefined;
}

function cCall(prim: Prim, args: string[], type: CScalar): string {
  const compare = C_COMPARE[prim];
  if (compare) return `(${args[0]} ${compare} ${args[1]})`;
  if (prim === 'select') return `(${args[0]} ? ${args[1]} : ${args[2]})`;
  const text = type === 'int32' ? intCall(prim, args) : floatCall(prim, args, type);
  if (text === undefined) throw new Error(`kernel IR: no ${type} C form for '${prim}'`);
  return text;
}

const cExpression = (e: Expr, type: CScalar): string =>
  renderText(
    e,
    (v) => cLiteral(v, type),
    (prim, args) => cCall(prim, args, type),
  );

/** The C scalar type a view of `dtype` computes in (the half types in float, bools in int). */
export function cScalarOf(dtype: DType): CScalar {
  if (dtype === 'float64' || dtype === 'int32') return dtype;
  return dtype === 'bool' ? 'int32' : 'float32';
}

/** `__device__ __forceinline__ T name(T a0, …) { T t0 = …; return …; }` (bool for a comparison). */
export const cFunction = memoized((f: ScalarFunction, type: CScalar, name: string): string => {
  const T = C_NAME[type];
  const params = Array.from({ length: f.arity }, (_, i) => `${T} a${i}`).join(', ');
  const lets = f.lets
    .map((e, i) => `${isBool(e, f.lets) ? 'bool' : T} t${i} = ${cExpression(e, type)};`)
    .join(' ');
  const result = isBool(f.result, f.lets) ? 'bool' : T;
  return `__device__ __forceinline__ ${result} ${name}(${params}) { ${lets} return ${cExpression(f.result, type)}; }`;
});

/** The index arithmetic's statements (./walk.ts) in C, over the index type `type` (`int`, `long long`). */
export function cIndexDialect(type: string): IndexDialect {
  const declare = (name: string, value: string) => `${type} ${name} = ${value};`;
  return { variable: declare, constant: declare, toOffset: (value) => value };
}

/**
 * One cast step (./casts.ts) in C, with the prelude's helpers (ar1_to_i32: ToInt32; the half conversions).
 */
export function cCast(step: CastStep, x: string): string {
  switch (step.kind) {
    case 'fromHalf':
      return `ar1_${step.half}_to_f32(${x})`;
    case 'toHalf':
      return `ar1_f32_to_${step.half}(${x})`;
    case 'toFloat':
      return `(${C_NAME[step.to]})(${x})`;
    case 'toInt32':
      return step.fromFloat ? `ar1_to_i32((double)(${x}))` : `(int)(${x})`;
    case 'toByte':
      return step.fromFloat ? `ar1_to_u8((double)(${x}))` : `(unsigned char)((${x}) & 255)`;
  }
}

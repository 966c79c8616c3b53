/**
 * Renders a scalar function as a WGSL function, in f32 or in i32. In f32, NaN is tested on the bits (a
 * shader compiler may assume x == x), tanh goes through exp(−2|x|) (never overflows) and pow follows
 * JavaScript's ** case by case; in i32, arithmetic wraps as an Int32Array store does, and a division by 0
 * gives 0. A number literal in an i32 function must be an integer.
 */
import { type Expr, type Prim, type ScalarFunction, isBool, memoized, renderText } from './expr.js';
import { C_COMPARE } from './render-c.js';
import type { CastStep } from './casts.js';
import type { IndexDialect } from './walk.js';

export type WgslScalar = 'f32' | 'i32';

/** ±Infinity at run time (WGSL rejects non-finite constant expressions, so go through a variable). */
export const INF = /* wgsl */ `fn neg_inf() -> f32 { var bits = 0xff800000u; return bitcast<f32>(bits); }
fn pos_inf() -> f32 { var bits = 0x7f800000u; return bitcast<f32>(bits); }
fn nan_f() -> f32 { var bits = 0x7fc00000u; return bitcast<f32>(bits); }`;

/** Float test for NaN that no fast-math pass can fold away (a shader compiler may assume x == x). */
export const IS_NAN = 'fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }';

/**
 * f32 to i32 as an Int32Array store converts a number (JavaScript's ToInt32): truncation toward zero, NaN and
 * ±Infinity to 0, magnitudes of 2^31 and more modulo 2^32 (WGSL's i32() clamps them instead). Above 2^31 an
 * f32 is m·2^k with m its 24-bit integer mantissa and k ≥ 8, so the low 32 bits are m shifted left by k.
 */
export const JS_I32 = /* wgsl */ `fn js_i32(x: f32) -> i32 {
  let bits = bitcast<u32>(x);
  let e = i32((bits >> 23u) & 0xffu);
  if (e == 255) { return 0; }
  if (e < 158) { return i32(trunc(x)); }
  let k = e - 150;
  if (k >= 32) { return 0; }
  let u = ((bits & 0x7fffffu) | 0x800000u) << u32(k);
  return select(i32(u), i32(0u - u), (bits & 0x80000000u) != 0u);
}`;

/** The helpers the rendered functions call, once per shader. */
export const WGSL_PRELUDE: Record<WgslScalar, string> = {
  f32: /* wgsl */ `
${IS_NAN}
${INF}
fn tanh_s(x: f32) -> f32 {
  if (abs(x) < 0.5) { return tanh(x); }
  let t = exp(-2.0 * abs(x));
  return sign(x) * (1.0 - t) / (1.0 + t);
}
// Math.sign: x itself for 0, −0 and NaN (WGSL's sign gives 0 for NaN).
fn sign_s(x: f32) -> f32 { return select(select(x, -1.0, x < 0.0), 1.0, x > 0.0); }
// JavaScript's a ** b: |a|^b, then for a negative base (−0 and −Infinity included) the sign of an odd
// integer power; a finite negative base to a fraction is NaN.
fn pow_s(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return 1.0; }
  if (is_nan(a) || is_nan(b)) { return nan_f(); }
  let m = exp2(b * log2(abs(a)));
  if ((bitcast<u32>(a) & 0x80000000u) == 0u) { return m; }
  let finite = (bitcast<u32>(a) & 0x7f800000u) != 0x7f800000u;
  if (finite && a != 0.0 && floor(b) != b) { return nan_f(); }
  return select(m, -m, abs(b) < 16777216.0 && floor(b) == b && (i32(abs(b)) & 1) == 1);
}
`,
  i32: /* wgsl */ `
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
`,
};

const INFIX: Partial<Record<Prim, string>> = { add: '+', sub: '-', mul: '*', ...C_COMPARE };

const FLOAT_CALLS: Partial<Record<Prim, string>> = {
  abs: 'abs',
  sign: 'sign_s',
  exp: 'exp',
  log: 'log',
  sqrt: 'sqrt',
  tanh: 'tanh_s',
  sin: 'sin',
  cos: 'cos',
  pow: 'pow_s',
};

const INT_CALLS: Partial<Record<Prim, string>> = { abs: 'abs', sign: 'sign', div: 'div_i', pow: 'pow_i' };

/** A constant in `type`; in i32, ±Infinity stands for the type's extremes (a reduction's identity). */
export function wgslLiteral(v: number, type: WgslScalar): string {
  if (type === 'i32') {
    if (v === Number.POSITIVE_INFINITY) return '2147483647i';
    if (v === Number.NEGATIVE_INFINITY) return 'i32(-2147483647 - 1)';
    if (!Number.isInteger(v)) throw new Error(`kernel IR: ${v} in an i32 WGSL function`);
    return `${v}i`;
  }
  if (Number.isNaN(v)) return 'nan_f()';
  if (!Number.isFinite(v)) return v > 0 ? 'pos_inf()' : 'neg_inf()';
  const s = String(Math.abs(v));
  const text = /[.e]/.test(s) ? s : `${s}.0`;
  return v < 0 || Object.is(v, -0) ? `(-${text})` : text;
}

function wgslCall(prim: Prim, args: string[], type: WgslScalar): string {
  const infix = INFIX[prim];
  if (infix) return `(${args[0]} ${infix} ${args[1]})`;
  if (prim === 'div' && type === 'f32') return `(${args[0]} / ${args[1]})`;
  const fn = (type === 'f32' ? FLOAT_CALLS : INT_CALLS)[prim];
  if (fn) return `${fn}(${args.join(', ')})`;
  switch (prim) {
    case 'neg':
      return `(-${args[0]})`;
    case 'select':
      return `select(${args[2]}, ${args[1]}, ${args[0]})`;
    case 'isnan':
      return type === 'f32' ? `is_nan(${args[0]})` : 'false';
    case 'truthy':
      return type === 'f32' ? `(${args[0]} != 0.0 && !is_nan(${args[0]}))` : `(${args[0]} != 0i)`;
  }
  throw new Error(`kernel IR: no ${type} WGSL form for '${prim}'`);
}

const wgslExpression = (e: Expr, type: WgslScalar): string =>
  renderText(
    e,
    (v) => wgslLiteral(v, type),
    (prim, args) => wgslCall(prim, args, type),
  );

/** `fn <name>(a0: T, …) -> T { let t0 = …; return …; }` (-> bool for a comparison). */
export const wgslFunction = memoized((f: ScalarFunction, type: WgslScalar, name: string): string => {
  const params = Array.from({ length: f.arity }, (_, i) => `a${i}: ${type}`).join(', ');
  const lets = f.lets.map((e, i) => `let t${i} = ${wgslExpression(e, type)};`).join(' ');
  const result = isBool(f.result, f.lets) ? 'bool' : type;
  return `fn ${name}(${params}) -> ${result} { ${lets} return ${wgslExpression(f.result, type)}; }`;
});

/** The index arithmetic's statements (./walk.ts) in WGSL: a u32 index, i32 offsets (strides may be negative). */
export const WGSL_INDEX: IndexDialect = {
  variable: (name, value) => `var ${name} = ${value};`,
  constant: (name, value) => `let ${name} = ${value};`,
  toOffset: (value) => `i32(${value})`,
};

/**
 * One cast step (./casts.ts) in WGSL, over the storage types (f32, i32, u32 for bool and half bits), with
 * JS_I32 for ToInt32 and HALF's conversions, which the shader must include.
 */
export function wgslCast(step: CastStep, x: string): string {
  switch (step.kind) {
    case 'fromHalf':
      return `${step.half}_to_f32(${x})`;
    case 'toHalf':
      return `f32_to_${step.half}(${x})`;
    case 'toFloat':
      return step.fromFloat ? x : `f32(${x})`;
    case 'toInt32':
      return step.fromFloat ? `js_i32(${x})` : `i32(${x})`;
    case 'toByte':
      return step.fromFloat ? `(u32(js_i32(${x})) & 255u)` : `(u32(${x}) & 255u)`;
  }
}

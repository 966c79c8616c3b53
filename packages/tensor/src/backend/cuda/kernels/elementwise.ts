/**
 * Elementwise kernels over strided views: fill, copy (with cast), unary, binary, where. One generator, a
 * "map" over a flat index: each operand (output included) has its own strides, so broadcast inputs
 * (stride 0), transposed views and strided destinations need no copies. The scalar functions follow the
 * CPU backend's definitions (cpu/elementwise.ts) case by case, NaN and integer wrap-around included.
 */
import { type DType, isHalf } from '../../../dtype.js';
import { sizeOf } from '../../../shape.js';
import type { BinaryOp, UnaryOp, View } from '../../backend.js';
import type { KernelArg } from '../args.js';
import { coalesce, extent, indexBitsFor } from '../coalesce.js';
import { type Launcher, gridFor, ptrOf } from '../launcher.js';
import {
  C_TYPE,
  type IndexBits,
  type KernelSource,
  computeType,
  convert,
  indexType,
  isFloatType,
  lit,
  source,
  stridedOffsets,
} from './common.js';

export interface MapOperand {
  name: string;
  dtype: DType;
}

export interface MapSpec {
  name: string;
  rank: number;
  bits: IndexBits;
  out: DType;
  inputs: readonly MapOperand[];
  /** Extra scalar arguments, e.g. `float value`. */
  scalars?: readonly string[];
  /** C expression of the output value, reading inputs as `v_<name>` (half inputs as float: computeType). */
  expr: string;
  prelude?: string;
}

export function mapKernel(spec: MapSpec): KernelSource {
  const idx = indexType(spec.bits);
  const params = [
    `${C_TYPE[spec.out]}* __restrict__ out`,
    'long long n',
    'Dims shape',
    'Dims st_out',
    ...spec.inputs.flatMap((o) => [
      `const ${C_TYPE[o.dtype]}* __restrict__ in_${o.name}`,
      `Dims st_${o.name}`,
    ]),
    ...(spec.scalars ?? []),
  ];
  // Half operands are read as float and the result stored rounded: expressions see compute types.
  const reads = spec.inputs.map((o) =>
    isHalf(o.dtype)
      ? `float v_${o.name} = ${convert(`in_${o.name}[off_${o.name}]`, o.dtype, 'float32')};`
      : `${C_TYPE[o.dtype]} v_${o.name} = in_${o.name}[off_${o.name}];`,
  );
  const value = isHalf(spec.out) ? convert(`(${spec.expr})`, 'float32', spec.out) : spec.expr;
  const body = `${spec.prelude ?? ''}
extern "C" __global__ void ${spec.name}(${params.join(', ')}) {
  for (${idx} i = (${idx})(blockIdx.x * blockDim.x + threadIdx.x); i < (${idx})n; i += (${idx})(gridDim.x * blockDim.x)) {
    ${stridedOffsets(spec.rank, ['out', ...spec.inputs.map((o) => o.name)], idx)}
    ${reads.join('\n    ')}
    out[off_out] = ${value};
  }
}`;
  return source(spec.name, body);
}

function f(dtype: DType, name: string): string {
  return dtype === 'float32' ? `${name}f` : name;
}

/** The unary scalar function as a C expression of `x`, or null where the dtype does not support it. */
export function unaryExpr(op: UnaryOp, dtype: DType): string | null {
  if (dtype === 'int32') {
    // Unsigned arithmetic wraps like the CPU backend's Int32Array stores (and avoids signed overflow UB).
    const ints: Partial<Record<UnaryOp, string>> = {
      neg: '(int)(0u - (unsigned int)x)',
      abs: '(x < 0 ? (int)(0u - (unsigned int)x) : x)',
      sign: '((x > 0) - (x < 0))',
      square: '(int)((unsigned int)x * (unsigned int)x)',
      relu: '(x > 0 ? x : 0)',
      step: '(x > 0 ? 1 : 0)',
      logical_not: '(x == 0 ? 1 : 0)',
    };
    return ints[op] ?? null;
  }
  if (dtype === 'bool') {
    const bools: Partial<Record<UnaryOp, string>> = {
      logical_not: '(unsigned char)(x == 0 ? 1 : 0)',
      abs: 'x',
      relu: 'x',
      step: 'x',
      sign: 'x',
      square: 'x',
    };
    return bools[op] ?? null;
  }
  const one = lit(1, dtype);
  const zero = lit(0, dtype);
  const half = lit(0.5, dtype);
  const c = lit(Math.sqrt(2 / Math.PI), dtype);
  const k = lit(0.044715, dtype);
  const sig = `(x >= ${zero} ? ${one} / (${one} + ${f(dtype, 'exp')}(-x)) : ${f(dtype, 'exp')}(x) / (${one} + ${f(dtype, 'exp')}(x)))`;
  const exprs: Record<UnaryOp, string> = {
    neg: '-x',
    abs: `${f(dtype, 'fabs')}(x)`,
    // Math.sign returns x itself for 0, -0 and NaN.
    sign: `(x > ${zero} ? ${one} : (x < ${zero} ? -${one} : x))`,
    exp: `${f(dtype, 'exp')}(x)`,
    log: `${f(dtype, 'log')}(x)`,
    sqrt: `${f(dtype, 'sqrt')}(x)`,
    rsqrt: `${one} / ${f(dtype, 'sqrt')}(x)`,
    tanh: `${f(dtype, 'tanh')}(x)`,
    sigmoid: sig,
    relu: `(x > ${zero} ? x : ${zero})`,
    step: `(x > ${zero} ? ${one} : ${zero})`,
    gelu: `${half} * x * (${one} + ${f(dtype, 'tanh')}(${c} * (x + ${k} * x * x * x)))`,
    gelu_grad: `ar1_gelu_grad(x)`,
    silu: `x * ${sig}`,
    silu_grad: `ar1_silu_grad(x)`,
    sin: `${f(dtype, 'sin')}(x)`,
    cos: `${f(dtype, 'cos')}(x)`,
    reciprocal: `${one} / x`,
    square: 'x * x',
    // NaN is falsy in JavaScript, so logical_not(NaN) is 1 on the CPU backend.
    logical_not: `((x == ${zero} || x != x) ? ${one} : ${zero})`,
  };
  return exprs[op];
}

/** Device functions the gelu/silu gradients need (a statement block is clearer than one expression). */
export function unaryPrelude(op: UnaryOp, dtype: DType): string {
  const T = C_TYPE[dtype];
  const one = lit(1, dtype);
  const half = lit(0.5, dtype);
  const c = lit(Math.sqrt(2 / Math.PI), dtype);
  const k = lit(0.044715, dtype);
  if (op === 'gelu_grad')
    return `__device__ __forceinline__ ${T} ar1_gelu_grad(${T} x) {
  ${T} t = ${f(dtype, 'tanh')}(${c} * (x + ${k} * x * x * x));
  return ${half} * (${one} + t) + ${half} * x * (${one} - t * t) * ${c} * (${one} + ${lit(3, dtype)} * ${k} * x * x);
}`;
  if (op === 'silu_grad')
    return `__device__ __forceinline__ ${T} ar1_silu_grad(${T} x) {
  ${T} s = x >= ${lit(0, dtype)} ? ${one} / (${one} + ${f(dtype, 'exp')}(-x)) : ${f(dtype, 'exp')}(x) / (${one} + ${f(dtype, 'exp')}(x));
  return s * (${one} + x * (${one} - s));
}`;
  return '';
}

export function unaryKernel(op: UnaryOp, dtype: DType, rank: number, bits: IndexBits): KernelSource {
  const c = computeType(dtype);
  const expr = unaryExpr(op, c);
  if (expr === null) throw new Error(`cuda unary: ${op} is not defined for ${dtype} (cast to a float first)`);
  return mapKernel({
    name: `ar1_unary_${op}_${dtype}_r${rank}_i${bits}`,
    rank,
    bits,
    out: dtype,
    inputs: [{ name: 'x', dtype }],
    expr: `[&]() { ${C_TYPE[c]} x = v_x; return (${C_TYPE[c]})(${expr}); }()`,
    prelude: unaryPrelude(op, c),
  });
}

const COMPARE: Partial<Record<BinaryOp, string>> = {
  eq: '==',
  ne: '!=',
  lt: '<',
  le: '<=',
  gt: '>',
  ge: '>=',
};

export function binaryExpr(op: BinaryOp, dtype: DType): string | null {
  const cmp = COMPARE[op];
  if (cmp) return `(unsigned char)(a ${cmp} b ? 1 : 0)`;
  // NaN wins a maximum/minimum when it is the first operand, as in the CPU backend.
  if (op === 'maximum') return isFloatType(dtype) ? '((a >= b || a != a) ? a : b)' : '(a >= b ? a : b)';
  if (op === 'minimum') return isFloatType(dtype) ? '((a <= b || a != a) ? a : b)' : '(a <= b ? a : b)';
  if (dtype === 'int32') {
    const ints: Partial<Record<BinaryOp, string>> = {
      add: '(int)((unsigned int)a + (unsigned int)b)',
      sub: '(int)((unsigned int)a - (unsigned int)b)',
      mul: '(int)((unsigned int)a * (unsigned int)b)',
      // The CPU's Int32Array store of a / b: truncated, 0 for a zero divisor, and -2^31 / -1 wraps.
      div: '(b == 0 ? 0 : b == -1 ? (int)(0u - (unsigned int)a) : a / b)',
      pow: 'ar1_ipow(a, b)',
    };
    return ints[op] ?? null;
  }
  if (dtype === 'bool') return null;
  const nan = dtype === 'float32' ? 'ar1_nan_f()' : 'ar1_nan_d()';
  const exprs: Partial<Record<BinaryOp, string>> = {
    add: 'a + b',
    sub: 'a - b',
    mul: 'a * b',
    div: 'a / b',
    // JavaScript's ** gives NaN for a NaN exponent and for (±1) ** ±Infinity, where C's pow gives 1.
    pow: `((b != b || (${f(dtype, 'fabs')}(a) == ${lit(1, dtype)} && ${f(dtype, 'fabs')}(b) == ${dtype === 'float32' ? 'ar1_inf_f()' : 'ar1_inf_d()'})) ? ${nan} : ${f(dtype, 'pow')}(a, b))`,
  };
  return exprs[op] ?? null;
}

export function binaryKernel(op: BinaryOp, dtype: DType, rank: number, bits: IndexBits): KernelSource {
  const c = computeType(dtype);
  const expr = binaryExpr(op, c);
  if (expr === null) throw new Error(`cuda binary: ${op} is not defined for ${dtype} operands`);
  const out: DType = COMPARE[op] ? 'bool' : dtype;
  const result = C_TYPE[computeType(out)];
  return mapKernel({
    name: `ar1_binary_${op}_${dtype}_r${rank}_i${bits}`,
    rank,
    bits,
    out,
    inputs: [
      { name: 'a', dtype },
      { name: 'b', dtype },
    ],
    expr: `[&]() { ${C_TYPE[c]} a = v_a; ${C_TYPE[c]} b = v_b; return (${result})(${expr}); }()`,
  });
}

export function whereKernel(dtype: DType, rank: number, bits: IndexBits): KernelSource {
  return mapKernel({
    name: `ar1_where_${dtype}_r${rank}_i${bits}`,
    rank,
    bits,
    out: dtype,
    inputs: [
      { name: 'c', dtype: 'bool' },
      { name: 'a', dtype },
      { name: 'b', dtype },
    ],
    expr: '(v_c ? v_a : v_b)',
  });
}

export function copyKernel(from: DType, to: DType, rank: number, bits: IndexBits): KernelSource {
  return mapKernel({
    name: `ar1_copy_${from}_${to}_r${rank}_i${bits}`,
    rank,
    bits,
    out: to,
    inputs: [{ name: 'x', dtype: from }],
    expr: convert('v_x', computeType(from), computeType(to)),
  });
}

/** The fill value arrives already converted to the output dtype (as a double for float64; a float, rounded
 * as it is stored, for the half types). */
export function fillKernel(dtype: DType, rank: number, bits: IndexBits): KernelSource {
  const c = computeType(dtype);
  const scalar = c === 'float64' ? 'double value' : c === 'float32' ? 'float value' : 'int value';
  return mapKernel({
    name: `ar1_fill_${dtype}_r${rank}_i${bits}`,
    rank,
    bits,
    out: dtype,
    inputs: [],
    scalars: [scalar],
    expr: `(${C_TYPE[c]})value`,
  });
}

// ---- launchers ----

const MAP_THREADS = 256;

/** Launches a map kernel over `out`'s shape, with every operand's strides merged and padded alike. */
function launchMap(
  L: Launcher,
  kernelFor: (rank: number, bits: IndexBits) => KernelSource,
  out: View,
  inputs: readonly View[],
  scalars: readonly KernelArg[] = [],
): void {
  const n = sizeOf(out.shape);
  if (n === 0) return;
  const views = [out, ...inputs];
  const walk = coalesce(
    out.shape,
    views.map((v) => v.strides),
  );
  const bits = indexBitsFor(
    n,
    views.map((v) => extent(v.shape, v.strides)),
  );
  const args: KernelArg[] = [
    ['ptr', ptrOf(out)],
    ['i64', n],
    ['dims', walk.shape],
    ['dims', walk.strides[0]],
  ];
  inputs.forEach((v, k) => {
    args.push(['ptr', ptrOf(v)], ['dims', walk.strides[k + 1]]);
  });
  args.push(...scalars);
  L.launch(kernelFor(walk.rank, bits), [gridFor(n, MAP_THREADS, L)], MAP_THREADS, args);
}

/** The fill value as the kernel takes it (JavaScript typed-array conversion; half types as a float). */
function fillScalar(dtype: DType, value: number): KernelArg {
  if (dtype === 'float64') return ['f64', value];
  if (dtype === 'float32' || isHalf(dtype)) return ['f32', value];
  return ['i32', dtype === 'bool' ? (value | 0) & 255 : value | 0];
}

export function launchFill(L: Launcher, out: View, value: number): void {
  launchMap(L, (rank, bits) => fillKernel(out.dtype, rank, bits), out, [], [fillScalar(out.dtype, value)]);
}

export function launchCopy(L: Launcher, src: View, dst: View): void {
  launchMap(L, (rank, bits) => copyKernel(src.dtype, dst.dtype, rank, bits), dst, [src]);
}

export function launchUnary(L: Launcher, op: UnaryOp, x: View, out: View): void {
  if (x.dtype !== out.dtype)
    throw new Error(`cuda unary: ${op} writes its input's dtype (${x.dtype}), not ${out.dtype}`);
  launchMap(L, (rank, bits) => unaryKernel(op, x.dtype, rank, bits), out, [x]);
}

export function launchBinary(L: Launcher, op: BinaryOp, a: View, b: View, out: View): void {
  if (a.dtype !== b.dtype)
    throw new Error(`cuda binary: ${op} operands must share one dtype (${a.dtype} vs ${b.dtype})`);
  launchMap(L, (rank, bits) => binaryKernel(op, a.dtype, rank, bits), out, [a, b]);
}

export function launchWhere(L: Launcher, cond: View, a: View, b: View, out: View): void {
  if (cond.dtype !== 'bool') throw new Error(`cuda where: the condition must be bool, got ${cond.dtype}`);
  if (a.dtype !== out.dtype || b.dtype !== out.dtype)
    throw new Error(
      `cuda where: branches (${a.dtype}, ${b.dtype}) must have the output's dtype ${out.dtype}`,
    );
  launchMap(L, (rank, bits) => whereKernel(out.dtype, rank, bits), out, [cond, a, b]);
}

/**
 * Elementwise kernels over strided views: fill, copy (with cast), unary, binary, where. One generator, a
 * "map" over a flat index: each operand (output included) has its own strides, so broadcast inputs
 * (stride 0), transposed views and strided destinations need no copies. The scalar functions follow the
 * kernel IR's functions (kernel-ir/elementwise.ts, rendered by kernel-ir/render-c.ts), with JavaScript's
 * NaN and integer wrap-around semantics, as the CPU backend computes them.
 */
import { type DType, isHalf } from '../../../dtype.js';
import { sizeOf } from '../../../shape.js';
import {
  BINARY_FUNCTIONS,
  INTEGER_UNARY_OPS,
  UNARY_FUNCTIONS,
  WHERE_FUNCTION,
} from '../../../kernel-ir/elementwise.js';
import type { ScalarFunction } from '../../../kernel-ir/expr.js';
import { cFunction, cScalarOf } from '../../../kernel-ir/render-c.js';
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

const COMPARE = new Set<BinaryOp>(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);

/** Whether `op` has a kernel for `dtype` views (integer views: the ops with an integer form). */
export function supportsUnary(op: UnaryOp, dtype: DType): boolean {
  return isFloatType(computeType(dtype)) || INTEGER_UNARY_OPS.includes(op);
}

/** Whether `op` has a kernel for two `dtype` views (bools: comparisons, maximum and minimum). */
export function supportsBinary(op: BinaryOp, dtype: DType): boolean {
  return dtype !== 'bool' || COMPARE.has(op) || op === 'maximum' || op === 'minimum';
}

/**
 * A map kernel whose value is `f` (rendered from the kernel IR) of the inputs, computed in the type of
 * `compute` views and stored as `out`.
 */
function irKernel(
  f: ScalarFunction,
  name: string,
  inputs: readonly MapOperand[],
  compute: DType,
  out: DType,
  rank: number,
  bits: IndexBits,
): KernelSource {
  const fn = `ar1_op_${f.name}`;
  const args = inputs.map((o) => `v_${o.name}`).join(', ');
  return mapKernel({
    name,
    rank,
    bits,
    out,
    inputs,
    expr: `(${C_TYPE[computeType(out)]})${fn}(${args})`,
    prelude: cFunction(f, cScalarOf(compute), fn),
  });
}

export function unaryKernel(op: UnaryOp, dtype: DType, rank: number, bits: IndexBits): KernelSource {
  if (!supportsUnary(op, dtype))
    throw new Error(`cuda unary: ${op} is not defined for ${dtype} (cast to a float first)`);
  const name = `ar1_unary_${op}_${dtype}_r${rank}_i${bits}`;
  return irKernel(UNARY_FUNCTIONS[op], name, [{ name: 'x', dtype }], dtype, dtype, rank, bits);
}

export function binaryKernel(op: BinaryOp, dtype: DType, rank: number, bits: IndexBits): KernelSource {
  if (!supportsBinary(op, dtype)) throw new Error(`cuda binary: ${op} is not defined for ${dtype} operands`);
  const inputs = [
    { name: 'a', dtype },
    { name: 'b', dtype },
  ];
  const name = `ar1_binary_${op}_${dtype}_r${rank}_i${bits}`;
  return irKernel(BINARY_FUNCTIONS[op], name, inputs, dtype, COMPARE.has(op) ? 'bool' : dtype, rank, bits);
}

export function whereKernel(dtype: DType, rank: number, bits: IndexBits): KernelSource {
  const inputs = [
    { name: 'c', dtype: 'bool' as DType },
    { name: 'a', dtype },
    { name: 'b', dtype },
  ];
  return irKernel(WHERE_FUNCTION, `ar1_where_${dtype}_r${rank}_i${bits}`, inputs, dtype, dtype, rank, bits);
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

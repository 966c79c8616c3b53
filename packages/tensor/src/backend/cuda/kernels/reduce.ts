/**
 * Reductions over any set of axes of a strided view. The host splits the axes into kept (outer) and
 * reduced (inner) walks, as the CPU backend does; each output element reduces its inner block. Two
 * shapes of launch: a block per output (threads stride over the inner block, then warp shuffles and
 * shared memory combine) when the inner block is long, a thread per output when it is short. float16 and
 * bfloat16 inputs are read as float and reduce in float; a half result is rounded once as it is stored.
 */
import { type DType, isHalf } from '../../../dtype.js';
import { sizeOf } from '../../../shape.js';
import {
  ARG_REDUCTIONS,
  type ArgReduceOp,
  VALUE_REDUCTIONS,
  type ValueReduceOp,
  isArgReduction,
} from '../../../kernel-ir/reduce.js';
import { cFunction, cIndexDialect, cLiteral, cScalarOf } from '../../../kernel-ir/render-c.js';
import { renderOffsetWalk } from '../../../kernel-ir/walk.js';
import type { ReduceOp, View } from '../../backend.js';
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
} from './common.js';

export type ReduceMode = 'block' | 'thread';
export const REDUCE_THREADS = 256;

export interface ReduceSpec {
  op: ReduceOp;
  input: DType;
  output: DType;
  outerRank: number;
  innerRank: number;
  mode: ReduceMode;
  bits: IndexBits;
}

/**
 * Accumulator type: float sums stay in the input precision (float for the half types); integers and bools
 * count in int.
 */
function accType(input: DType): string {
  const c = computeType(input);
  return isFloatType(c) ? C_TYPE[c] : 'int';
}

/** Declares `off_<prefix>`: the offset of element `index` of the walk in `<prefix>Shape`, `<prefix>St`. */
function walk(rank: number, prefix: string, idx: string, index: string): string {
  const lines = renderOffsetWalk(
    {
      rank,
      index,
      extent: (d) => `(${idx})${prefix}Shape.v[${d}]`,
      offsets: [`off_${prefix}`],
      stride: (_, d) => `(${idx})${prefix}St.v[${d}]`,
      rest: `rem_${prefix}`,
    },
    cIndexDialect(idx),
  );
  return [`${idx} off_${prefix} = 0;`, ...lines].join('\n  ');
}

/** The identity and the combine step (`ar1_combine(a, b)`), from the kernel IR (kernel-ir/reduce.ts). */
function valueOps(op: ValueReduceOp, input: DType): { init: string; combine: string } {
  const type = cScalarOf(computeType(input));
  const { identity, combine } = VALUE_REDUCTIONS[op];
  return { init: cLiteral(identity, type), combine: cFunction(combine, type, 'ar1_combine') };
}

/**
 * Arg-reductions combine (value, index) pairs so that the result is the CPU backend's sequential answer:
 * the first index of the best value; NaNs are never chosen, except a NaN at index 0, which nothing beats.
 * Which value is better is the kernel IR's.
 */
function argOps(op: ArgReduceOp, input: DType): string {
  const T = accType(input);
  return `${cFunction(ARG_REDUCTIONS[op].better, cScalarOf(computeType(input)), 'ar1_better')}
struct ArgPair { ${T} v; long long i; };
__device__ __forceinline__ ArgPair ar1_arg_combine(ArgPair a, ArgPair b) {
  if (a.i < 0) return b;
  if (b.i < 0) return a;
  if (a.i == 0 && a.v != a.v) return a;
  if (b.i == 0 && b.v != b.v) return b;
  if (a.v != a.v) return b;
  if (b.v != b.v) return a;
  if (ar1_better(a.v, b.v)) return b;
  if (ar1_better(b.v, a.v)) return a;
  return a.i < b.i ? a : b;
}`;
}

export function reduceKernel(spec: ReduceSpec): KernelSource {
  const { op, input, output, outerRank, innerRank, mode, bits } = spec;
  const name = `ar1_reduce_${op}_${input}_${output}_o${outerRank}_i${innerRank}_${mode}_i${bits}`;
  const idx = indexType(bits);
  const T = C_TYPE[input];
  const O = C_TYPE[output];
  const arg = isArgReduction(op);
  const A = arg ? 'ArgPair' : accType(input);
  const values = arg ? null : valueOps(op, input);
  const helpers = arg ? argOps(op, input) : values!.combine;
  const combine = arg ? 'ar1_arg_combine' : 'ar1_combine';
  const init = arg ? `ArgPair{(${accType(input)})0, -1}` : `(${A})${values!.init}`;
  const element = convert('x[base + off_in]', input, computeType(input));
  const load = arg ? `ArgPair{(${accType(input)})${element}, (long long)j}` : `(${A})${element}`;
  const value = isHalf(output) ? convert('acc', 'float32', output) : `(${O})acc`;
  const result = arg ? '(int)(acc.i < 0 ? 0 : acc.i)' : value;
  const params = `${O}* __restrict__ out, const ${T}* __restrict__ x, long long nOuter, long long nInner, Dims outShape, Dims outSt, Dims inShape, Dims inSt`;
  // Shuffling a struct: move its fields one by one.
  const shuffle = arg
    ? `ArgPair o; o.v = __shfl_down_sync(0xffffffffu, acc.v, s); o.i = __shfl_down_sync(0xffffffffu, acc.i, s); acc = ${combine}(acc, o);`
    : `acc = ${combine}(acc, __shfl_down_sync(0xffffffffu, acc, s));`;
  const perOutput =
    mode === 'thread'
      ? `for (${idx} r = (${idx})(blockIdx.x * blockDim.x + threadIdx.x); r < (${idx})nOuter; r += (${idx})(gridDim.x * blockDim.x)) {
  ${walk(outerRank, 'out', idx, 'r')}
  ${idx} base = off_out;
  ${A} acc = ${init};
  for (${idx} j = 0; j < (${idx})nInner; j++) {
    ${walk(innerRank, 'in', idx, 'j').replace(/\n/g, '\n    ')}
    acc = ${combine}(acc, ${load});
  }
  out[r] = ${result};
}`
      : `__shared__ ${A} partial[${REDUCE_THREADS / 32}];
for (${idx} r = (${idx})blockIdx.x; r < (${idx})nOuter; r += (${idx})gridDim.x) {
  ${walk(outerRank, 'out', idx, 'r')}
  ${idx} base = off_out;
  ${A} acc = ${init};
  for (${idx} j = (${idx})threadIdx.x; j < (${idx})nInner; j += (${idx})blockDim.x) {
    ${walk(innerRank, 'in', idx, 'j').replace(/\n/g, '\n    ')}
    acc = ${combine}(acc, ${load});
  }
  for (int s = 16; s > 0; s >>= 1) { ${shuffle} }
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < (blockDim.x >> 5) ? partial[threadIdx.x] : ${init};
    for (int s = 16; s > 0; s >>= 1) { ${shuffle} }
    if (threadIdx.x == 0) out[r] = ${result};
  }
  __syncthreads();
}`;
  const body = `${helpers}
extern "C" __global__ void __launch_bounds__(${REDUCE_THREADS}) ${name}(${params}) {
${perOutput}
}`;
  return source(name, body);
}

// ---- launcher ----

/** A thread per output when each reduces a short block and there are many outputs; else a block each. */
function modeFor(nOuter: number, nInner: number, L: Launcher): ReduceMode {
  return nInner <= 64 && nOuter >= L.multiprocessors * 64 ? 'thread' : 'block';
}

export function launchReduce(L: Launcher, op: ReduceOp, x: View, axes: readonly number[], out: View): void {
  const reduced = new Set(axes);
  const outer: [number[], number[]] = [[], []];
  const inner: [number[], number[]] = [[], []];
  x.shape.forEach((d, i) => {
    const side = reduced.has(i) ? inner : outer;
    side[0].push(d);
    side[1].push(x.strides[i]);
  });
  const nOuter = sizeOf(outer[0]);
  const nInner = sizeOf(inner[0]);
  if (nInner === 0 && op !== 'sum' && op !== 'prod')
    throw new Error(`cuda reduce: ${op} of an empty axis has no identity (shape [${x.shape}])`);
  if (nOuter !== sizeOf(out.shape)) throw new Error('cuda reduce: output size does not match the kept axes');
  if (nOuter === 0) return;
  const o = coalesce(outer[0], [outer[1]]);
  const i = coalesce(inner[0], [inner[1]]);
  const mode = modeFor(nOuter, nInner, L);
  const bits = indexBitsFor(Math.max(nOuter, nInner), [extent(x.shape, x.strides)]);
  const kernel = reduceKernel({
    op,
    input: x.dtype,
    output: out.dtype,
    outerRank: o.rank,
    innerRank: i.rank,
    mode,
    bits,
  });
  const grid =
    mode === 'thread' ? gridFor(nOuter, REDUCE_THREADS, L) : Math.min(nOuter, L.multiprocessors * 64);
  L.launch(kernel, [grid], REDUCE_THREADS, [
    ['ptr', ptrOf(out)],
    ['ptr', ptrOf(x)],
    ['i64', nOuter],
    ['i64', nInner],
    ['dims', o.shape],
    ['dims', o.strides[0]],
    ['dims', i.shape],
    ['dims', i.strides[0]],
  ]);
}

/**
 * What every generated CUDA C source shares: dtype names, the `Dims` argument that carries shapes and
 * strides, the prelude of small device helpers, and the rank buckets. Sources include no headers, so one
 * string compiles the same under NVRTC (no system headers) and under `nvcc` (the CI check).
 */
import { type DType, isHalf } from '../../../dtype.js';
import { castSteps, renderCast } from '../../../kernel-ir/casts.js';
import { cCast, cIndexDialect } from '../../../kernel-ir/render-c.js';
import { renderOffsetWalk } from '../../../kernel-ir/walk.js';

/**
 * Kernels see bool as one byte (0 or 1), as the rest of the library stores it (Uint8Array), and float16 and
 * bfloat16 as their bits (`unsigned short`), converted by the prelude's helpers: no `cuda_fp16.h` needed.
 */
export const C_TYPE: Record<DType, string> = {
  float32: 'float',
  float64: 'double',
  float16: 'unsigned short',
  bfloat16: 'unsigned short',
  int32: 'int',
  bool: 'unsigned char',
};

/** The most axes a strided kernel walks after the host merges contiguous axes (see coalesce.ts). */
export const MAX_RANK = 8;

/** Strided kernels are compiled per rank bucket; shorter ranks are padded with leading size-1 axes. */
export const RANK_BUCKETS = [1, 2, 3, 4, 6, 8] as const;

export function rankBucket(rank: number): number {
  for (const b of RANK_BUCKETS) if (rank <= b) return b;
  throw new Error(`cuda: rank ${rank} exceeds the ${MAX_RANK} axes a kernel supports after merging axes`);
}

/** Index arithmetic in 32 bits when every offset fits (faster division), else 64 bits. */
export type IndexBits = 32 | 64;

export function indexType(bits: IndexBits): string {
  return bits === 32 ? 'int' : 'long long';
}

/** A generated kernel: its entry point and the complete source that defines it. */
export interface KernelSource {
  readonly name: string;
  readonly source: string;
}

/**
 * float16 and bfloat16 bits to and from float, rounding to nearest even, in integer arithmetic (as src/half.ts
 * does, so results match the CPU backend's bit for bit, and no header or sm_80 instruction is needed).
 */
const HALF_PRELUDE = `__device__ __forceinline__ float ar1_bfloat16_to_f32(unsigned short h) { return __int_as_float((int)((unsigned int)h << 16)); }
__device__ __forceinline__ unsigned short ar1_f32_to_bfloat16(float x) {
  unsigned int b = (unsigned int)__float_as_int(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((b >> 16) | 0x40u);
  return (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ float ar1_float16_to_f32(unsigned short h) {
  unsigned int sign = ((unsigned int)h & 0x8000u) << 16, e = ((unsigned int)h >> 10) & 0x1fu, m = (unsigned int)h & 0x3ffu;
  if (e == 0) { float v = (float)m * 5.9604644775390625e-8f; return sign ? -v : v; }
  if (e == 31) return __int_as_float((int)(sign | 0x7f800000u | (m << 13)));
  return __int_as_float((int)(sign | ((e + 112u) << 23) | (m << 13)));
}
__device__ __forceinline__ unsigned short ar1_f32_to_float16(float x) {
  unsigned int b = (unsigned int)__float_as_int(x);
  unsigned int sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) return (unsigned short)(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
  if (a < 0x38800000u) {
    if (a < 0x33000000u) return (unsigned short)sign;
    unsigned int shift = 126u - (a >> 23), m = (a & 0x7fffffu) | 0x800000u;
    unsigned int q = m >> shift, r = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (r > halfway || (r == halfway && (q & 1u))) q++;
    return (unsigned short)(sign | q);
  }
  unsigned int h = (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3ffu), d = a & 0x1fffu;
  if (d > 0x1000u || (d == 0x1000u && (h & 1u))) h++;
  return (unsigned short)(sign | h);
}
`;

/**
 * Helpers defined in every source. `Dims` is passed by value (MAX_RANK 64-bit slots), so one compiled
 * kernel serves every shape. The float→int conversion reproduces JavaScript's ToInt32 (truncate, wrap
 * modulo 2^32, NaN and ±Infinity to 0), which is what the CPU backend's Int32Array stores do. ar1_ipow is
 * int32 `a ** b` as the CPU stores it where the power fits in int32 (wrapping beyond, as WebGPU's does);
 * negative powers truncate to 0 unless |a| is 1.
 */
export const PRELUDE = `struct Dims { long long v[${MAX_RANK}]; };
__device__ __forceinline__ float ar1_inf_f() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double ar1_inf_d() { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ float ar1_nan_f() { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double ar1_nan_d() { return __longlong_as_double(0x7ff8000000000000LL); }
__device__ __forceinline__ int ar1_to_i32(double x) {
  if (!(x - x == 0.0)) return 0;
  if (x > -2147483648.0 && x < 2147483648.0) return (int)x;
  double t = trunc(x);
  double m = t - floor(t / 4294967296.0) * 4294967296.0;
  return (int)(unsigned int)m;
}
__device__ __forceinline__ unsigned char ar1_to_u8(double x) { return (unsigned char)(ar1_to_i32(x) & 255); }
__device__ __forceinline__ int ar1_ipow(int a, int b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  unsigned int r = 1u, base = (unsigned int)a;
  for (; b != 0; b >>= 1) { if (b & 1) r *= base; base *= base; }
  return (int)r;
}
${HALF_PRELUDE}`;

/** A C expression converting `expr` (of dtype `from`) to dtype `to` as a JavaScript typed-array store would. */
export function convert(expr: string, from: DType, to: DType): string {
  return renderCast(expr, castSteps(from, to), cCast);
}

/** The type a kernel computes a dtype's values in: float for the half types, else the dtype itself. */
export function computeType(dtype: DType): DType {
  return isHalf(dtype) ? 'float32' : dtype;
}

/**
 * The C types of a kernel over `dtype`: S the stored element, T the compute type (float for the half types),
 * which is also the type of any statistic saved for a backward pass (statsDtype: mean, rstd, log-sum-exp);
 * ld(e) reads a stored element as T, st(e) rounds a T value to S.
 */
export function storageTypes(dtype: DType) {
  const c = computeType(dtype);
  return {
    c,
    S: C_TYPE[dtype],
    T: C_TYPE[c],
    ld: (e: string) => convert(e, dtype, c),
    st: (e: string) => convert(`(${e})`, c, dtype),
  };
}

export function isFloatType(dtype: DType): boolean {
  return dtype === 'float32' || dtype === 'float64';
}

/** Float literal of the right width (a double literal would silently promote float arithmetic). */
export function lit(value: number, dtype: DType): string {
  const s = Number.isInteger(value) ? `${value}.0` : `${value}`;
  return dtype === 'float32' ? `${s}f` : s;
}

/**
 * Declares `off_<operand>` for each operand and sets it to the element offset of flat row-major index
 * `index`, reading the extents from `shape` and the strides from `st_<operand>` (kernel-ir/walk.ts).
 */
export function stridedOffsets(rank: number, operands: readonly string[], idx: string, index = 'i'): string {
  const walk = renderOffsetWalk(
    {
      rank,
      index,
      extent: (d) => `(${idx})shape.v[${d}]`,
      offsets: operands.map((o) => `off_${o}`),
      stride: (k, d) => `(${idx})st_${operands[k]}.v[${d}]`,
      rest: 'rem',
    },
    cIndexDialect(idx),
  );
  return [...operands.map((o) => `${idx} off_${o} = 0;`), ...walk].join('\n    ');
}

/** A kernel source: the prelude, then the body. */
export function source(name: string, body: string): KernelSource {
  return { name, source: `${PRELUDE}\n${body}\n` };
}

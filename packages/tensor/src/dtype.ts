/**
 * Element types. `bool` is stored as one byte per element (0 or 1). `float16` and `bfloat16` are stored as
 * their 16-bit patterns (a Uint16Array on the CPU, see ./half.ts); kernels compute on them in float32.
 */
export type DType = 'float32' | 'float64' | 'float16' | 'bfloat16' | 'int32' | 'bool';

/** The floating-point dtypes: what parameters, activations and gradients can be. */
export type FloatDType = 'float32' | 'float64' | 'float16' | 'bfloat16';

export type TypedArray = Float32Array | Float64Array | Int32Array | Uint8Array | Uint16Array;

const ARRAY_CTOR = {
  float32: Float32Array,
  float64: Float64Array,
  float16: Uint16Array,
  bfloat16: Uint16Array,
  int32: Int32Array,
  bool: Uint8Array,
} as const;

/** An array of the storage type of `dtype` (half dtypes: their bits). */
export function typedArrayFor(dtype: DType, size: number): TypedArray {
  return new ARRAY_CTOR[dtype](size);
}

export function bytesPerElement(dtype: DType): number {
  return ARRAY_CTOR[dtype].BYTES_PER_ELEMENT;
}

export function isFloat(dtype: DType): boolean {
  return dtype === 'float32' || dtype === 'float64' || dtype === 'float16' || dtype === 'bfloat16';
}

export function isHalf(dtype: DType): dtype is 'float16' | 'bfloat16' {
  return dtype === 'float16' || dtype === 'bfloat16';
}

/** The dtype a typed array's elements have; a Uint16Array could be either half type, so it has none. */
export function dtypeOfArray(data: TypedArray): DType {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof Uint16Array)
    throw new Error(
      'a Uint16Array holds float16 or bfloat16 bits: say which with { dtype: "float16" } or "bfloat16"',
    );
  return 'bool';
}

const RANK: Record<DType, number> = { bool: 0, int32: 1, float16: 2, bfloat16: 2, float32: 3, float64: 4 };

/**
 * The type both operands are converted to before a binary op (bool < int32 < float16, bfloat16 < float32 <
 * float64); float16 with bfloat16 gives float32, as in PyTorch, since neither holds the other.
 */
export function promoteTypes(a: DType, b: DType): DType {
  if (a !== b && isHalf(a) && isHalf(b)) return 'float32';
  return RANK[a] >= RANK[b] ? a : b;
}

/** The dtype of a floating-point result computed from `dtype` (ints and bools become float32). */
export function floatTypeOf(dtype: DType): DType {
  return isFloat(dtype) ? dtype : 'float32';
}

/**
 * The dtype of the statistics a fused op saves for its backward (a norm's mean and rstd, a log-sum-exp):
 * float32 for the half types, whose rounding would move every recomputed probability or normalised value
 * (as PyTorch keeps them), else the input's own dtype.
 */
export function statsDtype(dtype: DType): DType {
  return isHalf(dtype) ? 'float32' : dtype;
}

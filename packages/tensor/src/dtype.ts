/** Element types. `bool` is stored as one byte per element (0 or 1). */
export type DType = 'float32' | 'float64' | 'int32' | 'bool';

export type TypedArray = Float32Array | Float64Array | Int32Array | Uint8Array;

const ARRAY_CTOR = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  bool: Uint8Array,
} as const;

export function typedArrayFor(dtype: DType, size: number): TypedArray {
  return new ARRAY_CTOR[dtype](size);
}

export function bytesPerElement(dtype: DType): number {
  return ARRAY_CTOR[dtype].BYTES_PER_ELEMENT;
}

export function isFloat(dtype: DType): boolean {
  return dtype === 'float32' || dtype === 'float64';
}

export function dtypeOfArray(data: TypedArray): DType {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof Int32Array) return 'int32';
  return 'bool';
}

const RANK: Record<DType, number> = { bool: 0, int32: 1, float32: 2, float64: 3 };

/** The type both operands are converted to before a binary op (bool < int32 < float32 < float64). */
export function promoteTypes(a: DType, b: DType): DType {
  return RANK[a] >= RANK[b] ? a : b;
}

/** The dtype of a floating-point result computed from `dtype` (ints and bools become float32). */
export function floatTypeOf(dtype: DType): DType {
  return isFloat(dtype) ? dtype : 'float32';
}

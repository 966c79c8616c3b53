import type { DType, TypedArray } from '../../dtype.js';
import type { Storage, View } from '../backend.js';

export interface CpuStorage extends Storage {
  readonly data: TypedArray;
}

export function dataOf(view: View): TypedArray {
  return (view.storage as CpuStorage).data;
}

export function makeStorage(dtype: DType, data: TypedArray, backend = 'cpu'): CpuStorage {
  return { backend, dtype, size: data.length, data };
}

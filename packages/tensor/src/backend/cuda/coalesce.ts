/**
 * Host-side shape work for strided kernels: the axes merged as every backend merges them, so most launches
 * run the rank-1 (or rank-2) kernel, then padded to the rank bucket the kernel was compiled for. Also
 * decides whether 32-bit index arithmetic is safe.
 */
import { mergeAxes } from '../../kernel-ir/walk.js';
import { MAX_RANK, rankBucket } from './kernels/common.js';

export interface Walk {
  /** Axis sizes, padded to the bucket rank with leading 1s. */
  shape: number[];
  /** One stride list per operand, padded like `shape` (stride 0 on padded axes). */
  strides: number[][];
  rank: number;
}

/** The merged axes (kernel-ir/walk.ts `mergeAxes`), padded to their rank bucket. */
export function coalesce(shape: readonly number[], strides: readonly (readonly number[])[]): Walk {
  const { shape: outShape, strides: outStrides } = mergeAxes(shape, strides);
  if (outShape.length > MAX_RANK)
    throw new Error(`cuda: a view of rank ${outShape.length} after merging axes exceeds ${MAX_RANK} axes`);
  const rank = rankBucket(Math.max(1, outShape.length));
  while (outShape.length < rank) {
    outShape.unshift(1);
    for (const s of outStrides) s.unshift(0);
  }
  return { shape: outShape, strides: outStrides, rank };
}

/** 32-bit index arithmetic holds when every element index and every reachable offset is below 2^31. */
export function indexBitsFor(count: number, extents: readonly number[]): 32 | 64 {
  const limit = 2 ** 31 - 1;
  return count < limit && extents.every((e) => e < limit) ? 32 : 64;
}

/** The largest offset (in elements) a strided walk reaches from its base. */
export function extent(shape: readonly number[], strides: readonly number[]): number {
  let e = 0;
  for (let d = 0; d < shape.length; d++) e += Math.max(0, shape[d] - 1) * Math.abs(strides[d]);
  return e;
}

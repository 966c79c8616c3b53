import type { View } from '../backend.js';
import { dataOf } from './storage.js';
import { elementOffsets } from './strided.js';

/**
 * Batched matmul over strided views. Each batch's operands are first packed into contiguous float64
 * panels (A as M×K, B as K×N), whatever their strides (transposed, broadcast), so the inner kernel is one
 * monomorphic loop nest: four rows of C at a time, i-k-j order, the inner loop streaming a row of B while
 * four accumulators rows stay hot. Packing costs O(MK + KN) against the O(MNK) product. Accumulation is
 * in float64.
 */
export function matmul(a: View, b: View, out: View): void {
  const rank = out.shape.length;
  const M = out.shape[rank - 2];
  const N = out.shape[rank - 1];
  const K = a.shape[rank - 1];
  const batchShape = out.shape.slice(0, rank - 2);
  const aBatch = elementOffsets(batchShape, a.strides.slice(0, rank - 2), a.offset);
  const bBatch = elementOffsets(batchShape, b.strides.slice(0, rank - 2), b.offset);
  const A = dataOf(a);
  const B = dataOf(b);
  const C = dataOf(out);
  const pa = new Float64Array(M * K);
  const pb = new Float64Array(K * N);
  const pc = new Float64Array(M * N);
  let packedB = -1;
  for (let batch = 0; batch < aBatch.length; batch++) {
    pack(A, aBatch[batch], M, K, a.strides[rank - 2], a.strides[rank - 1], pa);
    // A weight broadcast over the batch (stride 0) is packed once.
    if (bBatch[batch] !== packedB) {
      pack(B, bBatch[batch], K, N, b.strides[rank - 2], b.strides[rank - 1], pb);
      packedB = bBatch[batch];
    }
    multiply(pa, pb, pc, M, N, K);
    C.set(pc, batch * M * N);
  }
}

function pack(
  src: ArrayLike<number>,
  offset: number,
  rows: number,
  cols: number,
  rs: number,
  cs: number,
  dst: Float64Array,
): void {
  for (let i = 0; i < rows; i++) {
    const base = offset + i * rs;
    const d = i * cols;
    if (cs === 1) for (let j = 0; j < cols; j++) dst[d + j] = src[base + j];
    else for (let j = 0; j < cols; j++) dst[d + j] = src[base + j * cs];
  }
}

/** C = A·B on contiguous float64 panels (C is overwritten). */
function multiply(A: Float64Array, B: Float64Array, C: Float64Array, M: number, N: number, K: number): void {
  C.fill(0);
  let i = 0;
  for (; i + 4 <= M; i += 4) {
    const c0 = i * N;
    const c1 = c0 + N;
    const c2 = c1 + N;
    const c3 = c2 + N;
    for (let k = 0; k < K; k++) {
      const a0 = A[i * K + k];
      const a1 = A[(i + 1) * K + k];
      const a2 = A[(i + 2) * K + k];
      const a3 = A[(i + 3) * K + k];
      const bRow = k * N;
      for (let j = 0; j < N; j++) {
        const bv = B[bRow + j];
        C[c0 + j] += a0 * bv;
        C[c1 + j] += a1 * bv;
        C[c2 + j] += a2 * bv;
        C[c3 + j] += a3 * bv;
      }
    }
  }
  for (; i < M; i++) {
    const c0 = i * N;
    for (let k = 0; k < K; k++) {
      const a0 = A[i * K + k];
      const bRow = k * N;
      for (let j = 0; j < N; j++) C[c0 + j] += a0 * B[bRow + j];
    }
  }
}

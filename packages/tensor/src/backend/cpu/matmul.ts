import type { View } from '../backend.js';
import { dataOf } from './storage.js';
import { elementOffsets } from './strided.js';

const COLUMN_BLOCK = 256;

/**
 * Batched matmul over strided views. When b's rows are contiguous the loop order is i-k-j over column
 * blocks (the inner loop streams a row of b and of the accumulator); when b is transposed (contiguous along k)
 * each output is a dot product along k. Accumulation is in float64.
 */
export function matmul(a: View, b: View, out: View): void {
  const rank = out.shape.length;
  const M = out.shape[rank - 2];
  const N = out.shape[rank - 1];
  const K = a.shape[rank - 1];
  const batchShape = out.shape.slice(0, rank - 2);
  const aBatch = elementOffsets(batchShape, a.strides.slice(0, rank - 2), a.offset);
  const bBatch = elementOffsets(batchShape, b.strides.slice(0, rank - 2), b.offset);
  const sam = a.strides[rank - 2];
  const sak = a.strides[rank - 1];
  const sbk = b.strides[rank - 2];
  const sbn = b.strides[rank - 1];
  const A = dataOf(a);
  const B = dataOf(b);
  const C = dataOf(out);
  const acc = new Float64Array(Math.min(N, COLUMN_BLOCK));
  for (let batch = 0; batch < aBatch.length; batch++) {
    const a0 = aBatch[batch];
    const b0 = bBatch[batch];
    const c0 = batch * M * N;
    if (sbn === 1 || N === 1) {
      for (let j0 = 0; j0 < N; j0 += COLUMN_BLOCK) {
        const width = Math.min(COLUMN_BLOCK, N - j0);
        for (let i = 0; i < M; i++) {
          acc.fill(0, 0, width);
          const aRow = a0 + i * sam;
          for (let k = 0; k < K; k++) {
            const aik = A[aRow + k * sak];
            const bRow = b0 + k * sbk + j0 * sbn;
            for (let j = 0; j < width; j++) acc[j] += aik * B[bRow + j * sbn];
          }
          const cRow = c0 + i * N + j0;
          for (let j = 0; j < width; j++) C[cRow + j] = acc[j];
        }
      }
    } else {
      for (let i = 0; i < M; i++) {
        const aRow = a0 + i * sam;
        for (let j = 0; j < N; j++) {
          const bCol = b0 + j * sbn;
          let s = 0;
          for (let k = 0; k < K; k++) s += A[aRow + k * sak] * B[bCol + k * sbk];
          C[c0 + i * N + j] = s;
        }
      }
    }
  }
}

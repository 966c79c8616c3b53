/**
 * Matmul on the WebAssembly SIMD micro-kernels. Like the CPU kernel (../cpu/matmul.ts), each batch's
 * operands are packed first, whatever their strides (transposed, broadcast): here straight into the wasm
 * memory and into the panel layouts the micro-kernels stream through (see ./kernels.ts):
 *
 * - A in panels of 4 rows (the last one 1-3 rows), each K × R with a column's R values adjacent;
 * - B in panels of 8 columns (then 4), each K × W row-major, the last panel zero-padded to 4 columns;
 * - C as M × N4 (N rounded up to 4), of which the first N columns are copied out.
 *
 * The loop nest keeps one B panel (K·8 floats) hot in L1 while every A panel streams past it. Accumulation
 * is in float32 (the CPU kernel accumulates in float64), so results differ by O(K·ε₃₂) relative error.
 * Other dtypes fall back to the CPU kernel.
 */
import type { View } from '../backend.js';
import { matmul as cpuMatmul } from '../cpu/matmul.js';
import { dataOf } from '../cpu/storage.js';
import { elementOffsets } from '../cpu/strided.js';
import { getWasmRuntime } from './runtime.js';

const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

export function matmul(a: View, b: View, out: View): void {
  if (a.dtype !== 'float32' || b.dtype !== 'float32' || out.dtype !== 'float32') {
    cpuMatmul(a, b, out);
    return;
  }
  const rank = out.shape.length;
  const M = out.shape[rank - 2];
  const N = out.shape[rank - 1];
  const K = a.shape[rank - 1];
  const batchShape = out.shape.slice(0, rank - 2);
  const aBatch = elementOffsets(batchShape, a.strides.slice(0, rank - 2), a.offset);
  const bBatch = elementOffsets(batchShape, b.strides.slice(0, rank - 2), b.offset);
  const C = dataOf(out) as Float32Array;
  const mn = M * N;
  if (mn === 0 || aBatch.length === 0) return;
  if (K === 0) {
    C.fill(0, out.offset, out.offset + aBatch.length * mn);
    return;
  }
  const A = dataOf(a) as Float32Array;
  const B = dataOf(b) as Float32Array;
  const N4 = Math.ceil(N / 4) * 4;
  const aBase = 0;
  const bBase = align16(aBase + 4 * M * K);
  const cBase = align16(bBase + 4 * K * N4);
  const rt = getWasmRuntime();
  const mem = rt.reserve(cBase + 4 * M * N4);
  const [ars, acs] = [a.strides[rank - 2], a.strides[rank - 1]];
  const [brs, bcs] = [b.strides[rank - 2], b.strides[rank - 1]];
  let packedA = -1;
  let packedB = -1;
  for (let batch = 0; batch < aBatch.length; batch++) {
    // An operand broadcast over the batch (stride 0) is packed once.
    if (aBatch[batch] !== packedA) {
      packA(A, aBatch[batch], M, K, ars, acs, mem, aBase / 4);
      packedA = aBatch[batch];
    }
    if (bBatch[batch] !== packedB) {
      packB(B, bBatch[batch], K, N, brs, bcs, mem, bBase / 4);
      packedB = bBatch[batch];
    }
    for (let j0 = 0; j0 < N; ) {
      const W = N - j0 >= 8 ? 8 : 4;
      const bp = bBase + 4 * j0 * K;
      for (let i0 = 0; i0 < M; i0 += 4) {
        const R = Math.min(4, M - i0);
        rt.gemm[R][W](aBase + 4 * i0 * K, bp, cBase + 4 * (i0 * N4 + j0), K, 4 * N4);
      }
      j0 += W;
    }
    const dst = out.offset + batch * mn;
    const c0 = cBase / 4;
    if (N4 === N) C.set(mem.subarray(c0, c0 + mn), dst);
    else for (let i = 0; i < M; i++) C.set(mem.subarray(c0 + i * N4, c0 + i * N4 + N), dst + i * N);
  }
}

/** A (M × K, strides rs, cs) into panels of up to 4 rows, each K × R with the R values of a column adjacent. */
function packA(
  src: Float32Array,
  offset: number,
  M: number,
  K: number,
  rs: number,
  cs: number,
  mem: Float32Array,
  base: number,
): void {
  for (let i0 = 0; i0 < M; i0 += 4) {
    const R = Math.min(4, M - i0);
    const panel = base + i0 * K;
    for (let r = 0; r < R; r++) {
      const row = offset + (i0 + r) * rs;
      let d = panel + r;
      if (cs === 1) for (let k = 0; k < K; k++, d += R) mem[d] = src[row + k];
      else for (let k = 0; k < K; k++, d += R) mem[d] = src[row + k * cs];
    }
  }
}

/** B (K × N, strides rs, cs) into panels of 8 columns then 4, each K × W row-major, zero-padded to width. */
function packB(
  src: Float32Array,
  offset: number,
  K: number,
  N: number,
  rs: number,
  cs: number,
  mem: Float32Array,
  base: number,
): void {
  for (let j0 = 0; j0 < N; ) {
    const W = N - j0 >= 8 ? 8 : 4;
    const w = Math.min(W, N - j0);
    let d = base + j0 * K;
    for (let k = 0; k < K; k++) {
      const row = offset + k * rs + j0 * cs;
      if (cs === 1) for (let c = 0; c < w; c++) mem[d + c] = src[row + c];
      else for (let c = 0; c < w; c++) mem[d + c] = src[row + c * cs];
      for (let c = w; c < W; c++) mem[d + c] = 0;
      d += W;
    }
    j0 += W;
  }
}

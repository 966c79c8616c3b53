/**
 * Matmul on the WebAssembly SIMD micro-kernels. Like the CPU kernel (../cpu/matmul.ts), each batch's
 * operands are packed first, whatever their strides (transposed, broadcast): here straight into the wasm
 * memory and into the panel layouts the micro-kernels stream through (see ./kernels.ts):
 *
 * - A in panels of 4 rows (the last one 1-3 rows), each K × R with a column's R values adjacent;
 * - B in panels of 8 columns (then 4), each K × W row-major, the last panel zero-padded to 4 columns;
 * - C as M × N4 (N rounded up to 4), of which the first N columns are copied out; or, when the output
 *   lives in the wasm memory (./arena.ts) and N is a multiple of 4, C is the output itself.
 *
 * All batches are packed first; the work is then a list of `gemm_block` calls, one per (batch, block of
 * rows), split over the threads (./runtime.ts). Each call runs the loop nest of ./emit/gemm.ts, so an element
 * is computed the same way whatever the thread count. Accumulation
 * is in float32 (the CPU kernel accumulates in float64), so results differ by O(K·ε₃₂) relative error.
 * Other dtypes fall back to the CPU kernel.
 */
import type { View } from '../backend.js';
import { matmul as cpuMatmul } from '../cpu/matmul.js';
import { dataOf } from '../cpu/storage.js';
import { elementOffsets } from '../cpu/strided.js';
import type { Call } from './pool.js';
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
  // Each distinct operand (an operand broadcast over the batch has one offset) is packed once.
  const aAt = new Map<number, number>();
  const bAt = new Map<number, number>();
  let top = 0;
  for (const off of aBatch)
    if (!aAt.has(off)) {
      aAt.set(off, top);
      top = align16(top + 4 * M * K);
    }
  for (const off of bBatch)
    if (!bAt.has(off)) {
      bAt.set(off, top);
      top = align16(top + 4 * K * N4);
    }
  const rt = getWasmRuntime();
  // C is written in place when the output lives in the wasm memory and its rows need no padding.
  const cAddress = rt.addressOf(C);
  const cInPlace = cAddress !== undefined && N4 === N;
  const { base, mem } = rt.scratch(top + (cInPlace ? 0 : 4 * M * N4 * aBatch.length));
  const cBase = cInPlace ? cAddress + 4 * out.offset : base + top;
  const [ars, acs] = [a.strides[rank - 2], a.strides[rank - 1]];
  const [brs, bcs] = [b.strides[rank - 2], b.strides[rank - 1]];
  // Operands in the wasm memory (tensors of 1,024 floats and more) are packed by the module: the JavaScript
  // loop over a shared Float32Array is several times slower, a decode step packs every weight matrix as B,
  // and an update step packs thousands of rows of activations as A.
  const aAddress = rt.addressOf(A);
  for (const [off, at] of aAt)
    if (aAddress !== undefined) rt.fn.pack_a(aAddress + 4 * off, M, K, 4 * ars, 4 * acs, base + at);
    else packA(A, off, M, K, ars, acs, mem, (base + at) / 4);
  const bAddress = rt.addressOf(B);
  for (const [off, at] of bAt)
    if (bAddress !== undefined) rt.fn.pack_b(bAddress + 4 * off, K, N, 4 * brs, 4 * bcs, base + at);
    else packB(B, off, K, N, brs, bcs, mem, (base + at) / 4);
  // Calls over (batch, block of rows): enough blocks for every thread, each a multiple of 4 rows.
  const batches = aBatch.length;
  const lanes = rt.lanes(2 * M * N * K * batches);
  const pieces = Math.min(Math.ceil(M / 4), Math.max(1, Math.ceil((2 * lanes) / batches)));
  const rowsPer = Math.ceil(M / pieces / 4) * 4;
  const id = rt.id('gemm_block');
  const calls: Call[] = [];
  for (let batch = 0; batch < batches; batch++) {
    const ap = base + (aAt.get(aBatch[batch]) as number);
    const bp = base + (bAt.get(bBatch[batch]) as number);
    const cp = cBase + 4 * M * N4 * batch;
    for (let i0 = 0; i0 < M; i0 += rowsPer) {
      const rows = Math.min(rowsPer, M - i0);
      calls.push([id, ap + 4 * i0 * K, bp, cp + 4 * i0 * N4, rows, N, K, 4 * N4]);
    }
  }
  rt.parallel('matmul', calls, lanes);
  if (cInPlace) return;
  const view = rt.view();
  for (let batch = 0; batch < batches; batch++) {
    const dst = out.offset + batch * mn;
    const c0 = (cBase + 4 * M * N4 * batch) / 4;
    if (N4 === N) C.set(view.subarray(c0, c0 + mn), dst);
    else for (let i = 0; i < M; i++) C.set(view.subarray(c0 + i * N4, c0 + i * N4 + N), dst + i * N);
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
  if (rs === 1 && cs !== 1) {
    packColumnMajorA(src, offset, M, K, cs, mem, base);
    return;
  }
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

/**
 * packA for an A whose rows are contiguous (a transposed view, as in a weight gradient Xᵀ·dY): a panel is
 * filled one k at a time, its R values read side by side and written in order, instead of walking each
 * row along k, which reads one float per cache line (packing a 3,000 × 4,800 A: 52 ms against 124 ms).
 */
function packColumnMajorA(
  src: Float32Array,
  offset: number,
  M: number,
  K: number,
  cs: number,
  mem: Float32Array,
  base: number,
): void {
  for (let i0 = 0; i0 < M; i0 += 4) {
    const R = Math.min(4, M - i0);
    let d = base + i0 * K;
    for (let k = 0; k < K; k++) {
      const column = offset + k * cs + i0;
      for (let r = 0; r < R; r++) mem[d++] = src[column + r];
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

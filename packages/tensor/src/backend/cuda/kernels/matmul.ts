/**
 * Batched matmul: C[b] = A[b]·B[b], tiled in shared memory with register blocking. A block computes a
 * BM×BN tile of C with (BM/TM)·(BN/TN) threads, each accumulating a TM×TN micro-tile in registers while
 * BK-wide slabs of A and B stream through shared memory. Operand layouts are compile-time: 'n' (unit
 * column stride, row-major), 't' (unit row stride, i.e. a transposed view) or 's' (any strides), so the
 * tile loads are coalesced along whichever axis is contiguous and transposed views need no copy.
 * Thread i of a micro-tile owns rows ty + i·(BM/TM) (strided, not adjacent) so shared-memory reads and
 * the final stores are conflict-free and coalesced. float16 and bfloat16 operands are widened to float
 * as tiles load and accumulate in float; each result is rounded once to the half type as it is stored.
 */
import type { DType } from '../../../dtype.js';
import { cIndexDialect } from '../../../kernel-ir/render-c.js';
import { renderOffsetWalk } from '../../../kernel-ir/walk.js';
import { sizeOf } from '../../../shape.js';
import type { View } from '../../backend.js';
import { coalesce } from '../coalesce.js';
import { planGemm } from '../gemm-plan.js';
import { type Launcher, ptrOf } from '../launcher.js';
import { C_TYPE, type KernelSource, computeType, convert, source } from './common.js';

export type Layout = 'n' | 't' | 's';

export interface MatmulTiles {
  BM: number;
  BN: number;
  BK: number;
  TM: number;
  TN: number;
}

export interface MatmulSpec {
  dtype: DType;
  a: Layout;
  b: Layout;
  /** Batch axes after merging (0 for a single matrix product), padded to 0, 1, 2 or 4. */
  batchRank: number;
  tiles: MatmulTiles;
}

export const MATMUL_TILES = {
  small: { BM: 64, BN: 64, BK: 16, TM: 4, TN: 4 },
  large: { BM: 128, BN: 128, BK: 8, TM: 8, TN: 8 },
  double: { BM: 64, BN: 64, BK: 8, TM: 4, TN: 4 },
} as const satisfies Record<string, MatmulTiles>;

export const BATCH_BUCKETS = [0, 1, 2, 4] as const;

export function layoutOf(rowStride: number, colStride: number, rows: number, cols: number): Layout {
  if (colStride === 1 || cols === 1) return 'n';
  if (rowStride === 1 || rows === 1) return 't';
  return 's';
}

export function matmulThreads(t: MatmulTiles): number {
  return (t.BM / t.TM) * (t.BN / t.TN);
}

/** Loads a ROWS×COLS tile of a matrix into smem[col][row] (A: rows=M, cols=K; B: rows=N, cols=K). */
function tileLoad(
  smem: string,
  ptr: string,
  layout: Layout,
  rows: number,
  cols: number,
  rowLimit: string,
  rowStart: string,
  colStart: string,
  rowStride: string,
  colStride: string,
  threads: number,
  zero: string,
  widen: (element: string) => string,
): string {
  const per = (rows * cols) / threads;
  // Consecutive threads walk the unit-stride axis: along the k axis when it has stride 1 ('n' for A),
  // along the row axis otherwise.
  const alongCols = layout === 'n';
  const r = alongCols ? `e / ${cols}` : `e % ${rows}`;
  const c = alongCols ? `e % ${cols}` : `e / ${rows}`;
  const rs = layout === 't' ? '1' : rowStride;
  const cs = layout === 'n' ? '1' : colStride;
  return `#pragma unroll
    for (int l = 0; l < ${per}; l++) {
      int e = tid + l * ${threads};
      int r = ${r}, c = ${c};
      long long gr = ${rowStart} + r, gc = ${colStart} + c;
      ${smem}[c][r] = (gr < ${rowLimit} && gc < K) ? ${widen(`${ptr}[gr * ${rs} + gc * ${cs}]`)} : ${zero};
    }`;
}

/**
 * A's tile is indexed [k][m], B's [k][n] after loading B as an N×K matrix: B(k, n) read with row = n,
 * col = k, so its strides swap.
 */
export function matmulKernel(spec: MatmulSpec): KernelSource {
  const { dtype, a, b, batchRank, tiles } = spec;
  const { BM, BN, BK, TM, TN } = tiles;
  // S: what memory holds; T: what tiles and accumulators hold (float for the half types).
  const S = C_TYPE[dtype];
  const compute = computeType(dtype);
  const T = C_TYPE[compute];
  const widen = (element: string) => convert(element, dtype, compute);
  if (dtype === 'bool')
    throw new Error('cuda matmul: bool operands are not supported (cast to a number type)');
  const threads = matmulThreads(tiles);
  if ((BM * BK) % threads || (BN * BK) % threads)
    throw new Error(`cuda matmul: tile ${BM}x${BN}x${BK} does not divide among ${threads} threads`);
  const name = `ar1_matmul_${dtype}_${a}${b}_b${batchRank}_${BM}x${BN}x${BK}_${TM}x${TN}`;
  const zero = `(${T})0`;
  const batchWalk = renderOffsetWalk(
    {
      rank: batchRank,
      index: 'z',
      extent: (d) => `bShape.v[${d}]`,
      offsets: ['A', 'B'],
      stride: (k, d) => `${k === 0 ? 'aBatch' : 'bBatch'}.v[${d}]`,
    },
    cIndexDialect('long long'),
  );
  const body = `extern "C" __global__ void __launch_bounds__(${threads}) ${name}(${S}* __restrict__ C, const ${S}* __restrict__ A, const ${S}* __restrict__ B, int M, int N, int K, long long ars, long long acs, long long brs, long long bcs, Dims bShape, Dims aBatch, Dims bBatch, long long z0) {
  __shared__ ${T} As[${BK}][${BM} + 1];
  __shared__ ${T} Bs[${BK}][${BN} + 1];
  const int tid = threadIdx.x;
  const int tx = tid % ${BN / TN}, ty = tid / ${BN / TN};
  const long long z = z0 + blockIdx.z;
  ${batchWalk.join('\n  ')}
  C += z * M * N;
  const long long m0 = (long long)blockIdx.y * ${BM}, n0 = (long long)blockIdx.x * ${BN};
  ${T} acc[${TM}][${TN}];
  #pragma unroll
  for (int i = 0; i < ${TM}; i++)
    #pragma unroll
    for (int j = 0; j < ${TN}; j++) acc[i][j] = ${zero};
  for (long long k0 = 0; k0 < K; k0 += ${BK}) {
    ${tileLoad('As', 'A', a, BM, BK, 'M', 'm0', 'k0', 'ars', 'acs', threads, zero, widen)}
    ${tileLoad('Bs', 'B', b === 'n' ? 't' : b === 't' ? 'n' : 's', BN, BK, 'N', 'n0', 'k0', 'bcs', 'brs', threads, zero, widen)}
    __syncthreads();
    #pragma unroll
    for (int kk = 0; kk < ${BK}; kk++) {
      ${T} ra[${TM}], rb[${TN}];
      #pragma unroll
      for (int i = 0; i < ${TM}; i++) ra[i] = As[kk][ty + i * ${BM / TM}];
      #pragma unroll
      for (int j = 0; j < ${TN}; j++) rb[j] = Bs[kk][tx + j * ${BN / TN}];
      #pragma unroll
      for (int i = 0; i < ${TM}; i++)
        #pragma unroll
        for (int j = 0; j < ${TN}; j++) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
  #pragma unroll
  for (int i = 0; i < ${TM}; i++) {
    long long r = m0 + ty + i * ${BM / TM};
    if (r >= M) continue;
    #pragma unroll
    for (int j = 0; j < ${TN}; j++) {
      long long c = n0 + tx + j * ${BN / TN};
      if (c < N) C[r * N + c] = ${convert('acc[i][j]', compute, dtype)};
    }
  }
}`;
  return source(name, body);
}

// ---- launcher ----

const MAX_GRID_Z = 65535;

function tilesFor(dtype: DType, M: number, N: number, batches: number, L: Launcher): MatmulTiles {
  if (dtype === 'float64') return MATMUL_TILES.double;
  const big = MATMUL_TILES.large;
  const blocks = Math.ceil(M / big.BM) * Math.ceil(N / big.BN) * batches;
  // The 128×128 tile only pays when it still gives every multiprocessor a block.
  return M >= big.BM && N >= big.BN && blocks >= L.multiprocessors ? big : MATMUL_TILES.small;
}

/** out = a·b: through the launcher's vendor GEMM where it has one that takes the views, else our kernel. */
export function launchMatmul(L: Launcher, a: View, b: View, out: View): void {
  if (a.dtype !== b.dtype || a.dtype !== out.dtype)
    throw new Error(
      `cuda matmul: operands and output must share one dtype (${a.dtype}, ${b.dtype}, ${out.dtype})`,
    );
  const rank = out.shape.length;
  const M = out.shape[rank - 2];
  const N = out.shape[rank - 1];
  const K = a.shape[rank - 1];
  const batchShape = out.shape.slice(0, rank - 2);
  const nBatch = sizeOf(batchShape);
  if (M === 0 || N === 0 || nBatch === 0) return;
  const plan = L.gemm ? planGemm(a, b, out) : undefined;
  if (plan) {
    L.gemm?.(plan, { a: ptrOf(a), b: ptrOf(b), out: ptrOf(out) });
    return;
  }
  const outBatch = out.strides.slice(0, rank - 2);
  const walk = coalesce(batchShape, [a.strides.slice(0, rank - 2), b.strides.slice(0, rank - 2), outBatch]);
  const realRank = walk.shape.filter((d) => d !== 1).length;
  const batchRank = BATCH_BUCKETS.find((r) => r >= realRank);
  if (batchRank === undefined)
    throw new Error(`cuda matmul: ${realRank} batch axes after merging exceed ${BATCH_BUCKETS.at(-1)}`);
  // The merged batch axes sit at the end of the walk; pad or trim them to the kernel's bucket.
  const fit = (s: number[], pad: number) => {
    const t = batchRank === 0 ? [] : s.slice(-batchRank);
    while (t.length < batchRank) t.unshift(pad);
    return t;
  };
  const [ars, acs] = [a.strides[rank - 2], a.strides[rank - 1]];
  const [brs, bcs] = [b.strides[rank - 2], b.strides[rank - 1]];
  const tiles = tilesFor(a.dtype, M, N, nBatch, L);
  const kernel = matmulKernel({
    dtype: a.dtype,
    a: layoutOf(ars, acs, M, K),
    b: layoutOf(brs, bcs, K, N),
    batchRank,
    tiles,
  });
  for (let z0 = 0; z0 < nBatch; z0 += MAX_GRID_Z) {
    const nz = Math.min(MAX_GRID_Z, nBatch - z0);
    L.launch(kernel, [Math.ceil(N / tiles.BN), Math.ceil(M / tiles.BM), nz], matmulThreads(tiles), [
      ['ptr', ptrOf(out)],
      ['ptr', ptrOf(a)],
      ['ptr', ptrOf(b)],
      ['i32', M],
      ['i32', N],
      ['i32', K],
      ['i64', ars],
      ['i64', acs],
      ['i64', brs],
      ['i64', bcs],
      ['dims', fit(walk.shape, 1)],
      ['dims', fit(walk.strides[0], 0)],
      ['dims', fit(walk.strides[1], 0)],
      ['i64', z0],
    ]);
  }
}

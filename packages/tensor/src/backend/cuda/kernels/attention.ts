/**
 * Flash-style attention (Dao et al.): scores are never materialised beyond one tile. Forward: a block owns
 * Br query rows of one (batch, head); K and V tiles of Bc keys stream through shared memory; each query
 * row is owned by 4 threads (TPR) that keep its running max, running sum and a quarter of its output row
 * in registers (online softmax). Backward recomputes probabilities from the saved log-sum-exp in two
 * kernels without atomics: dQ (a block per query tile, looping over keys) and dK/dV (a block per key tile
 * of one KV head, looping over the query heads of its group and their rows), plus a small kernel for
 * delta = rowsum(dO ∘ O). GQA maps query head h to KV head h / (H / Hkv); the causal rule keeps key j for
 * query i when j <= i + (S - T) (bottom-right aligned, for a KV cache); the optional bool mask is any
 * broadcast view of [B, H, T, S] (four strides). The head size is a compile-time bucket (DMAX) with the
 * real D passed at launch; tiles are zero-padded beyond D, T and S. float16 and bfloat16 inputs are
 * converted to float as tiles load (shared memory and registers hold float), the log-sum-exp and delta stay
 * float, and each stored output is rounded once.
 */
import { type DType, bytesPerElement, isHalf } from '../../../dtype.js';
import { type AttentionArgs, type AttentionBackwardArgs, assertHeadsDense } from '../../backend.js';
import { ATTENTION_DS } from '../../../kernel-ir/rows.js';
import type { KernelArg } from '../args.js';
import { type Launcher, assertDense, assertStatsDtype, ptrOf, ptrOrNull, sameDtype } from '../launcher.js';
import { type KernelSource, computeType, source, storageTypes } from './common.js';
import { rowFunctions } from './rows.js';

/** Threads per query row (forward, dQ) or per key row (dK/dV). */
export const TPR = 4;
export const HEAD_BUCKETS = [32, 64, 128, 256] as const;
const SHARED_LIMIT = 48 * 1024;

export type AttentionKind = 'forward' | 'dq' | 'dkv';

export function headBucket(D: number): number {
  for (const b of HEAD_BUCKETS) if (D <= b) return b;
  throw new Error(`cuda attention: head size ${D} exceeds the largest supported (${HEAD_BUCKETS.at(-1)})`);
}

function sharedBytes(kind: AttentionKind, elem: number, dmax: number, p: number): number {
  const tile = p * (dmax + 1);
  const small = p * (p + 1);
  if (kind === 'forward') return elem * (2 * tile + small);
  if (kind === 'dq') return elem * (4 * tile + small);
  return elem * (4 * tile + 2 * small + 2 * p);
}

/**
 * The largest square tile (Br = Bc) whose shared memory fits the 48 KiB every GPU grants without opt-in.
 * At least 8 rows, so a block is at least one full warp (the row groups exchange values by warp shuffle).
 */
export function attentionTile(kind: AttentionKind, dtype: DType, dmax: number): number {
  const elem = bytesPerElement(computeType(dtype)); // shared memory holds the compute type
  for (const p of [64, 32, 16, 8]) if (sharedBytes(kind, elem, dmax, p) <= SHARED_LIMIT) return p;
  throw new Error(
    `cuda attention: head size ${dmax} is too large for ${dtype} attention (its tiles exceed shared memory)`,
  );
}

/** Whether every attention kernel has a tile for this dtype and head bucket. */
export function attentionSupported(dtype: DType, dmax: number): boolean {
  const elem = bytesPerElement(computeType(dtype)); // shared memory holds the compute type
  return (['forward', 'dq', 'dkv'] as const).every((k) => sharedBytes(k, elem, dmax, 8) <= SHARED_LIMIT);
}

function check(dtype: DType): void {
  if (dtype !== 'float32' && dtype !== 'float64' && !isHalf(dtype))
    throw new Error(`cuda attention: expected float32, float64, float16 or bfloat16, got ${dtype}`);
}

/** The C types (storageTypes) and the compute type's infinity, exp and log. */
function attentionTypes(dtype: DType) {
  check(dtype);
  const types = storageTypes(dtype);
  const float = types.c === 'float32';
  return {
    ...types,
    inf: float ? 'ar1_inf_f()' : 'ar1_inf_d()',
    exp: float ? '__expf' : 'exp',
    log: float ? 'logf' : 'log',
  };
}

const COMMON_PARAMS =
  'const unsigned char* __restrict__ mask, Dims maskSt, int H, int Hkv, int Tq, int S, int D, double scaleD, int causal';

/** Whether query i may attend key j (b, h: the batch and query head). */
function allowed(i: string, j: string): string {
  return `(${i} < Tq && ${j} < S && (!causal || ${j} <= ${i} + (long long)(S - Tq)) && (!mask || mask[(long long)b * maskSt.v[0] + (long long)h * maskSt.v[1] + ${i} * maskSt.v[2] + ${j} * maskSt.v[3]] != 0))`;
}

/**
 * Copies rows [r0, r0 + rows) of a [*, D] matrix into smem[rows][dmax + 1] (in the compute type: half
 * elements are converted as they are loaded), zero beyond D and `limit`.
 */
function loadTile(
  smem: string,
  ptr: string,
  r0: string,
  rows: number,
  dmax: number,
  threads: number,
  limit: string,
  types: { T: string; ld: (e: string) => string },
): string {
  return `for (int e = threadIdx.x; e < ${rows * dmax}; e += ${threads}) {
      int r = e / ${dmax}, d = e % ${dmax};
      long long gr = ${r0} + r;
      ${smem}[r][d] = (gr < ${limit} && d < D) ? ${types.ld(`${ptr}[gr * D + d]`)} : (${types.T})0;
    }`;
}

function names(kind: AttentionKind, dtype: DType, dmax: number): string {
  return `ar1_attention_${kind}_${dtype}_d${dmax}`;
}

export function attentionForwardKernel(dtype: DType, dmax: number): KernelSource {
  const types = attentionTypes(dtype);
  const { S: E, T, st, inf, exp, log } = types;
  const p = attentionTile('forward', dtype, dmax);
  const threads = p * TPR;
  const name = names('forward', dtype, dmax);
  const body = `extern "C" __global__ void __launch_bounds__(${threads}) ${name}(${E}* __restrict__ out, ${T}* __restrict__ lse, const ${E}* __restrict__ q, const ${E}* __restrict__ k, const ${E}* __restrict__ v, long long kSb, long long kSh, long long vSb, long long vSh, ${COMMON_PARAMS}) {
  __shared__ ${T} Qs[${p}][${dmax + 1}];
  __shared__ ${T} KV[${p}][${dmax + 1}];
  __shared__ ${T} Ps[${p}][${p + 1}];
  const int row = threadIdx.x / ${TPR}, l4 = threadIdx.x % ${TPR};
  const int bh = blockIdx.y, b = bh / H, h = bh % H, hk = h / (H / Hkv);
  const ${T} scale = (${T})scaleD;
  const long long i0 = (long long)blockIdx.x * ${p}, i = i0 + row;
  const ${E}* qb = q + (long long)bh * Tq * D;
  // K and V rows by batch and head stride: a KV cache's view is read in place.
  const ${E}* kb = k + b * kSb + hk * kSh;
  const ${E}* vb = v + b * vSb + hk * vSh;
  ${loadTile('Qs', 'qb', 'i0', p, dmax, threads, 'Tq', types)}
  ${T} o[${dmax / TPR}];
  #pragma unroll
  for (int dd = 0; dd < ${dmax / TPR}; dd++) o[dd] = (${T})0;
  ${T} m = -${inf}, l = (${T})0;
  long long lastRow = (i0 + ${p} < Tq ? i0 + ${p} : (long long)Tq) - 1;
  long long kvEnd = causal ? lastRow + (S - Tq) + 1 : (long long)S;
  if (kvEnd > S) kvEnd = S;
  for (long long j0 = 0; j0 < kvEnd; j0 += ${p}) {
    __syncthreads();
    ${loadTile('KV', 'kb', 'j0', p, dmax, threads, 'S', types)}
    __syncthreads();
    ${T} s[${p / TPR}];
    ${T} tileMax = -${inf};
    #pragma unroll
    for (int jj = 0; jj < ${p / TPR}; jj++) {
      int c = l4 + jj * ${TPR};
      long long j = j0 + c;
      ${T} acc = (${T})0;
      #pragma unroll 8
      for (int d = 0; d < ${dmax}; d++) acc += Qs[row][d] * KV[c][d];
      s[jj] = ${allowed('i', 'j')} ? acc * scale : -${inf};
      tileMax = s[jj] > tileMax ? s[jj] : tileMax;
    }
    #pragma unroll
    for (int w = 1; w < ${TPR}; w <<= 1) { ${T} o2 = __shfl_xor_sync(0xffffffffu, tileMax, w); tileMax = o2 > tileMax ? o2 : tileMax; }
    ${T} mNew = tileMax > m ? tileMax : m;
    ${T} alpha = mNew == -${inf} ? (${T})1 : ${exp}(m - mNew);
    ${T} psum = (${T})0;
    #pragma unroll
    for (int jj = 0; jj < ${p / TPR}; jj++) {
      ${T} pj = s[jj] == -${inf} ? (${T})0 : ${exp}(s[jj] - mNew);
      Ps[row][l4 + jj * ${TPR}] = pj;
      psum += pj;
    }
    #pragma unroll
    for (int w = 1; w < ${TPR}; w <<= 1) psum += __shfl_xor_sync(0xffffffffu, psum, w);
    l = l * alpha + psum;
    m = mNew;
    #pragma unroll
    for (int dd = 0; dd < ${dmax / TPR}; dd++) o[dd] *= alpha;
    __syncthreads();
    ${loadTile('KV', 'vb', 'j0', p, dmax, threads, 'S', types)}
    __syncthreads();
    for (int c = 0; c < ${p}; c++) {
      ${T} pc = Ps[row][c];
      #pragma unroll
      for (int dd = 0; dd < ${dmax / TPR}; dd++) o[dd] += pc * KV[c][l4 + dd * ${TPR}];
    }
  }
  if (i < Tq) {
    ${E}* ob = out + ((long long)bh * Tq + i) * D;
    #pragma unroll
    for (int dd = 0; dd < ${dmax / TPR}; dd++) {
      int d = l4 + dd * ${TPR};
      if (d < D) ob[d] = ${st(`l > (${T})0 ? o[dd] / l : (${T})0`)};
    }
    if (l4 == 0) lse[(long long)bh * Tq + i] = l > (${T})0 ? m + ${log}(l) : -${inf};
  }
}`;
  return source(name, body);
}

/** delta[row] = Σ_d dO[row, d]·O[row, d], one warp per row. */
export function attentionDeltaKernel(dtype: DType): KernelSource {
  const { S: E, T, ld } = attentionTypes(dtype);
  const name = `ar1_attention_delta_${dtype}`;
  const body = `extern "C" __global__ void ${name}(${T}* __restrict__ delta, const ${E}* __restrict__ out, const ${E}* __restrict__ dout, long long rows, int D) {
  long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (r >= rows) return;
  ${T} acc = (${T})0;
  for (int d = lane; d < D; d += 32) acc += ${ld('out[r * D + d]')} * ${ld('dout[r * D + d]')};
  for (int w = 16; w > 0; w >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, w);
  if (lane == 0) delta[r] = acc;
}`;
  return source(name, body);
}

export function attentionDqKernel(dtype: DType, dmax: number): KernelSource {
  const types = attentionTypes(dtype);
  const { S: E, T, st, inf, exp } = types;
  const p = attentionTile('dq', dtype, dmax);
  const threads = p * TPR;
  const name = names('dq', dtype, dmax);
  const body = `${rowFunctions(types.c, ATTENTION_DS)}
extern "C" __global__ void __launch_bounds__(${threads}) ${name}(${E}* __restrict__ dq, const ${E}* __restrict__ q, const ${E}* __restrict__ k, const ${E}* __restrict__ v, const ${E}* __restrict__ dout, const ${T}* __restrict__ lse, const ${T}* __restrict__ delta, ${COMMON_PARAMS}) {
  __shared__ ${T} Qs[${p}][${dmax + 1}];
  __shared__ ${T} dOs[${p}][${dmax + 1}];
  __shared__ ${T} Ks[${p}][${dmax + 1}];
  __shared__ ${T} Vs[${p}][${dmax + 1}];
  __shared__ ${T} dSs[${p}][${p + 1}];
  const int row = threadIdx.x / ${TPR}, l4 = threadIdx.x % ${TPR};
  const int bh = blockIdx.y, b = bh / H, h = bh % H, hk = h / (H / Hkv);
  const ${T} scale = (${T})scaleD;
  const long long i0 = (long long)blockIdx.x * ${p}, i = i0 + row;
  const ${E}* qb = q + (long long)bh * Tq * D;
  const ${E}* gb = dout + (long long)bh * Tq * D;
  const ${E}* kb = k + (long long)(b * Hkv + hk) * S * D;
  const ${E}* vb = v + (long long)(b * Hkv + hk) * S * D;
  ${loadTile('Qs', 'qb', 'i0', p, dmax, threads, 'Tq', types)}
  ${loadTile('dOs', 'gb', 'i0', p, dmax, threads, 'Tq', types)}
  const ${T} lseI = i < Tq ? lse[(long long)bh * Tq + i] : -${inf};
  const ${T} deltaI = i < Tq ? delta[(long long)bh * Tq + i] : (${T})0;
  ${T} acc[${dmax / TPR}];
  #pragma unroll
  for (int dd = 0; dd < ${dmax / TPR}; dd++) acc[dd] = (${T})0;
  long long lastRow = (i0 + ${p} < Tq ? i0 + ${p} : (long long)Tq) - 1;
  long long kvEnd = causal ? lastRow + (S - Tq) + 1 : (long long)S;
  if (kvEnd > S) kvEnd = S;
  for (long long j0 = 0; j0 < kvEnd; j0 += ${p}) {
    __syncthreads();
    ${loadTile('Ks', 'kb', 'j0', p, dmax, threads, 'S', types)}
    ${loadTile('Vs', 'vb', 'j0', p, dmax, threads, 'S', types)}
    __syncthreads();
    #pragma unroll
    for (int jj = 0; jj < ${p / TPR}; jj++) {
      int c = l4 + jj * ${TPR};
      long long j = j0 + c;
      ${T} sc = (${T})0, dp = (${T})0;
      #pragma unroll 8
      for (int d = 0; d < ${dmax}; d++) { sc += Qs[row][d] * Ks[c][d]; dp += dOs[row][d] * Vs[c][d]; }
      ${T} pij = (lseI != -${inf} && ${allowed('i', 'j')}) ? ${exp}(sc * scale - lseI) : (${T})0;
      dSs[row][c] = ${ATTENTION_DS.name}(pij, dp, deltaI, scale);
    }
    __syncthreads();
    for (int c = 0; c < ${p}; c++) {
      ${T} ds = dSs[row][c];
      #pragma unroll
      for (int dd = 0; dd < ${dmax / TPR}; dd++) acc[dd] += ds * Ks[c][l4 + dd * ${TPR}];
    }
  }
  if (i < Tq) {
    ${E}* ob = dq + ((long long)bh * Tq + i) * D;
    #pragma unroll
    for (int dd = 0; dd < ${dmax / TPR}; dd++) {
      int d = l4 + dd * ${TPR};
      if (d < D) ob[d] = ${st('acc[dd]')};
    }
  }
}`;
  return source(name, body);
}

export function attentionDkvKernel(dtype: DType, dmax: number): KernelSource {
  const types = attentionTypes(dtype);
  const { S: E, T, st, inf, exp } = types;
  const p = attentionTile('dkv', dtype, dmax);
  const threads = p * TPR;
  const name = names('dkv', dtype, dmax);
  const body = `${rowFunctions(types.c, ATTENTION_DS)}
extern "C" __global__ void __launch_bounds__(${threads}) ${name}(${E}* __restrict__ dk, ${E}* __restrict__ dv, const ${E}* __restrict__ q, const ${E}* __restrict__ k, const ${E}* __restrict__ v, const ${E}* __restrict__ dout, const ${T}* __restrict__ lse, const ${T}* __restrict__ delta, ${COMMON_PARAMS}) {
  __shared__ ${T} Ks[${p}][${dmax + 1}];
  __shared__ ${T} Vs[${p}][${dmax + 1}];
  __shared__ ${T} Qs[${p}][${dmax + 1}];
  __shared__ ${T} dOs[${p}][${dmax + 1}];
  __shared__ ${T} Pt[${p}][${p + 1}];
  __shared__ ${T} dSt[${p}][${p + 1}];
  __shared__ ${T} lses[${p}];
  __shared__ ${T} deltas[${p}];
  const int krow = threadIdx.x / ${TPR}, l4 = threadIdx.x % ${TPR};
  const int bhk = blockIdx.y, b = bhk / Hkv, hk = bhk % Hkv, G = H / Hkv;
  const ${T} scale = (${T})scaleD;
  const long long j0 = (long long)blockIdx.x * ${p}, j = j0 + krow;
  const ${E}* kb = k + (long long)bhk * S * D;
  const ${E}* vb = v + (long long)bhk * S * D;
  ${loadTile('Ks', 'kb', 'j0', p, dmax, threads, 'S', types)}
  ${loadTile('Vs', 'vb', 'j0', p, dmax, threads, 'S', types)}
  ${T} gk[${dmax / TPR}], gv[${dmax / TPR}];
  #pragma unroll
  for (int dd = 0; dd < ${dmax / TPR}; dd++) { gk[dd] = (${T})0; gv[dd] = (${T})0; }
  // Under the causal rule, query rows before j0 - (S - T) see none of this tile's keys.
  long long iFirst = causal ? j0 - (long long)(S - Tq) : 0;
  if (iFirst < 0) iFirst = 0;
  iFirst -= iFirst % ${p};
  for (int g = 0; g < G; g++) {
    const int h = hk * G + g, bh = b * H + h;
    const ${E}* qb = q + (long long)bh * Tq * D;
    const ${E}* gb = dout + (long long)bh * Tq * D;
    for (long long i0 = iFirst; i0 < Tq; i0 += ${p}) {
      __syncthreads();
      ${loadTile('Qs', 'qb', 'i0', p, dmax, threads, 'Tq', types)}
      ${loadTile('dOs', 'gb', 'i0', p, dmax, threads, 'Tq', types)}
      if (threadIdx.x < ${p}) {
        long long ii = i0 + threadIdx.x;
        lses[threadIdx.x] = ii < Tq ? lse[(long long)bh * Tq + ii] : -${inf};
        deltas[threadIdx.x] = ii < Tq ? delta[(long long)bh * Tq + ii] : (${T})0;
      }
      __syncthreads();
      #pragma unroll
      for (int rr = 0; rr < ${p / TPR}; rr++) {
        int r = l4 + rr * ${TPR};
        long long i = i0 + r;
        ${T} sc = (${T})0, dp = (${T})0;
        #pragma unroll 8
        for (int d = 0; d < ${dmax}; d++) { sc += Qs[r][d] * Ks[krow][d]; dp += dOs[r][d] * Vs[krow][d]; }
        ${T} pij = (lses[r] != -${inf} && ${allowed('i', 'j')}) ? ${exp}(sc * scale - lses[r]) : (${T})0;
        Pt[krow][r] = pij;
        dSt[krow][r] = ${ATTENTION_DS.name}(pij, dp, deltas[r], scale);
      }
      __syncthreads();
      for (int r = 0; r < ${p}; r++) {
        ${T} pr = Pt[krow][r], ds = dSt[krow][r];
        #pragma unroll
        for (int dd = 0; dd < ${dmax / TPR}; dd++) {
          gv[dd] += pr * dOs[r][l4 + dd * ${TPR}];
          gk[dd] += ds * Qs[r][l4 + dd * ${TPR}];
        }
      }
    }
  }
  if (j < S) {
    #pragma unroll
    for (int dd = 0; dd < ${dmax / TPR}; dd++) {
      int d = l4 + dd * ${TPR};
      if (d < D) { dk[j * D + d + (long long)bhk * S * D] = ${st('gk[dd]')}; dv[j * D + d + (long long)bhk * S * D] = ${st('gv[dd]')}; }
    }
  }
}`;
  return source(name, body);
}

// ---- launchers ----

const MAX_GRID_Y = 65535;

function shapes(args: AttentionArgs | AttentionBackwardArgs) {
  const [B, H, T, D] = args.q.shape;
  const [, Hkv, S] = args.k.shape;
  if (B * Math.max(H, Hkv) > MAX_GRID_Y)
    throw new Error(`cuda attention: batch × heads = ${B * H} exceeds ${MAX_GRID_Y} blocks`);
  const dmax = headBucket(D);
  if (!attentionSupported(args.q.dtype, dmax))
    throw new Error(
      `cuda attention: head size ${D} is too large for ${args.q.dtype} attention (at most 128 in float64)`,
    );
  return { B, H, Hkv, T, S, D, dmax };
}

function commonArgs(args: AttentionArgs | AttentionBackwardArgs, s: ReturnType<typeof shapes>): KernelArg[] {
  return [
    ['ptr', ptrOrNull(args.mask)],
    ['dims', args.mask ? args.mask.strides : [0, 0, 0, 0]],
    ['i32', s.H],
    ['i32', s.Hkv],
    ['i32', s.T],
    ['i32', s.S],
    ['i32', s.D],
    ['f64', args.scale],
    ['i32', args.causal ? 1 : 0],
  ];
}

export function launchAttention(L: Launcher, args: AttentionArgs): void {
  assertDense('attention', args.q);
  assertHeadsDense('cuda attention', args.k, args.v);
  sameDtype('attention', args.q, args.k, args.v, args.out);
  assertStatsDtype('attention', args.q, { lse: args.lse });
  const s = shapes(args);
  if (s.B * s.H * s.T === 0) return;
  const p = attentionTile('forward', args.q.dtype, s.dmax);
  L.launch(attentionForwardKernel(args.q.dtype, s.dmax), [Math.ceil(s.T / p), s.B * s.H], p * TPR, [
    ['ptr', ptrOf(args.out)],
    ['ptr', ptrOf(args.lse)],
    ['ptr', ptrOf(args.q)],
    ['ptr', ptrOf(args.k)],
    ['ptr', ptrOf(args.v)],
    ['i64', args.k.strides[0]],
    ['i64', args.k.strides[1]],
    ['i64', args.v.strides[0]],
    ['i64', args.v.strides[1]],
    ...commonArgs(args, s),
  ]);
}

export function launchAttentionBackward(L: Launcher, args: AttentionBackwardArgs): void {
  assertDense('attentionBackward', args.q, args.k, args.v, args.out, args.dout, args.lse);
  sameDtype('attentionBackward', args.q, args.k, args.v, args.out, args.dout, args.dq, args.dk, args.dv);
  assertStatsDtype('attentionBackward', args.q, { lse: args.lse });
  const s = shapes(args);
  const dtype = args.q.dtype;
  const rows = s.B * s.H * s.T;
  if (rows === 0) {
    // No query rows: every key and value gradient is zero.
    const bytes = s.B * s.Hkv * s.S * s.D * bytesPerElement(dtype);
    L.zero(ptrOf(args.dk), bytes);
    L.zero(ptrOf(args.dv), bytes);
    return;
  }
  // delta, one per query row, in the compute type (float for the half types), as the log-sum-exp is.
  const delta = L.scratch(rows * bytesPerElement(computeType(dtype)));
  try {
    L.launch(attentionDeltaKernel(dtype), [Math.ceil((rows * 32) / 256)], 256, [
      ['ptr', delta.ptr],
      ['ptr', ptrOf(args.out)],
      ['ptr', ptrOf(args.dout)],
      ['i64', rows],
      ['i32', s.D],
    ]);
    const inputs: KernelArg[] = [
      ['ptr', ptrOf(args.q)],
      ['ptr', ptrOf(args.k)],
      ['ptr', ptrOf(args.v)],
      ['ptr', ptrOf(args.dout)],
      ['ptr', ptrOf(args.lse)],
      ['ptr', delta.ptr],
      ...commonArgs(args, s),
    ];
    const pq = attentionTile('dq', dtype, s.dmax);
    L.launch(attentionDqKernel(dtype, s.dmax), [Math.ceil(s.T / pq), s.B * s.H], pq * TPR, [
      ['ptr', ptrOf(args.dq)],
      ...inputs,
    ]);
    const pk = attentionTile('dkv', dtype, s.dmax);
    L.launch(attentionDkvKernel(dtype, s.dmax), [Math.ceil(s.S / pk), s.B * s.Hkv], pk * TPR, [
      ['ptr', ptrOf(args.dk)],
      ['ptr', ptrOf(args.dv)],
      ...inputs,
    ]);
  } finally {
    L.release(delta);
  }
}

/**
 * gather and scatterAdd along one axis, over strided views. The index walk has the index tensor's shape;
 * the target's offset is its strides with the `dim` axis left to the index value. An out-of-range index
 * cannot throw inside a kernel, so it is skipped and recorded in the device error word, which the backend
 * reads back (and throws on) at the next read or sync.
 */
import type { DType } from '../../../dtype.js';
import { sizeOf } from '../../../shape.js';
import type { View } from '../../backend.js';
import { coalesce, extent, indexBitsFor } from '../coalesce.js';
import { type Launcher, gridFor, ptrOf } from '../launcher.js';
import { C_TYPE, type IndexBits, type KernelSource, indexType, source, stridedOffsets } from './common.js';

/** Codes written to the device error word; the backend turns them into messages (see errors.ts). */
export const DEVICE_ERRORS = {
  1: 'gather: an index was out of range for its dimension',
  2: 'scatterAdd: an index was out of range for its dimension',
  3: 'logprobs: a target was out of range [0, vocabulary size)',
} as const;

export function gatherKernel(dtype: DType, rank: number, bits: IndexBits): KernelSource {
  const T = C_TYPE[dtype];
  const idx = indexType(bits);
  const name = `ar1_gather_${dtype}_r${rank}_i${bits}`;
  const body = `extern "C" __global__ void ${name}(${T}* __restrict__ out, const ${T}* __restrict__ x, const int* __restrict__ index, long long n, Dims shape, Dims st_x, Dims st_index, long long dimSize, long long dimStride, int* err) {
  for (${idx} i = (${idx})(blockIdx.x * blockDim.x + threadIdx.x); i < (${idx})n; i += (${idx})(gridDim.x * blockDim.x)) {
    ${stridedOffsets(rank, ['x', 'index'], idx)}
    int id = index[off_index];
    if (id < 0 || id >= dimSize) { atomicExch(err, 1); out[i] = (${T})0; continue; }
    out[i] = x[off_x + (${idx})id * (${idx})dimStride];
  }
}`;
  return source(name, body);
}

export function scatterAddKernel(dtype: DType, rank: number, bits: IndexBits): KernelSource {
  if (dtype === 'bool') throw new Error('cuda scatterAdd: bool destinations are not supported');
  const T = C_TYPE[dtype];
  const idx = indexType(bits);
  const name = `ar1_scatter_add_${dtype}_r${rank}_i${bits}`;
  const body = `extern "C" __global__ void ${name}(${T}* dst, const int* __restrict__ index, const ${T}* __restrict__ src, long long n, Dims shape, Dims st_dst, Dims st_index, Dims st_src, long long dimSize, long long dimStride, int* err) {
  for (${idx} i = (${idx})(blockIdx.x * blockDim.x + threadIdx.x); i < (${idx})n; i += (${idx})(gridDim.x * blockDim.x)) {
    ${stridedOffsets(rank, ['dst', 'index', 'src'], idx)}
    int id = index[off_index];
    if (id < 0 || id >= dimSize) { atomicExch(err, 2); continue; }
    atomicAdd(dst + off_dst + (${idx})id * (${idx})dimStride, src[off_src]);
  }
}`;
  return source(name, body);
}

// ---- launchers ----

const THREADS = 256;

/** The target's strides with the indexed axis zeroed: the index supplies that coordinate. */
function besideDim(v: View, dim: number): number[] {
  return v.strides.map((s, i) => (i === dim ? 0 : s));
}

export function launchGather(L: Launcher, x: View, dim: number, index: View, out: View): void {
  if (index.dtype !== 'int32') throw new Error(`cuda gather: the index must be int32, got ${index.dtype}`);
  const n = sizeOf(index.shape);
  if (n === 0) return;
  const xs = besideDim(x, dim);
  const walk = coalesce(index.shape, [xs, index.strides]);
  const bits = indexBitsFor(n, [extent(x.shape, x.strides), extent(index.shape, index.strides)]);
  L.launch(gatherKernel(x.dtype, walk.rank, bits), [gridFor(n, THREADS, L)], THREADS, [
    ['ptr', ptrOf(out)],
    ['ptr', ptrOf(x)],
    ['ptr', ptrOf(index)],
    ['i64', n],
    ['dims', walk.shape],
    ['dims', walk.strides[0]],
    ['dims', walk.strides[1]],
    ['i64', x.shape[dim]],
    ['i64', x.strides[dim]],
    ['ptr', L.errorWord],
  ]);
}

export function launchScatterAdd(L: Launcher, dst: View, dim: number, index: View, src: View): void {
  if (index.dtype !== 'int32')
    throw new Error(`cuda scatterAdd: the index must be int32, got ${index.dtype}`);
  if (src.dtype !== dst.dtype)
    throw new Error(`cuda scatterAdd: src ${src.dtype} must match dst ${dst.dtype}`);
  const n = sizeOf(index.shape);
  if (n === 0) return;
  const walk = coalesce(index.shape, [besideDim(dst, dim), index.strides, src.strides]);
  const bits = indexBitsFor(
    n,
    [dst, index, src].map((v) => extent(v.shape, v.strides)),
  );
  L.launch(scatterAddKernel(dst.dtype, walk.rank, bits), [gridFor(n, THREADS, L)], THREADS, [
    ['ptr', ptrOf(dst)],
    ['ptr', ptrOf(index)],
    ['ptr', ptrOf(src)],
    ['i64', n],
    ['dims', walk.shape],
    ['dims', walk.strides[0]],
    ['dims', walk.strides[1]],
    ['dims', walk.strides[2]],
    ['i64', dst.shape[dim]],
    ['i64', dst.strides[dim]],
    ['ptr', L.errorWord],
  ]);
}

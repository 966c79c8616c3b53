/**
 * gather and scatterAdd along one axis, over strided views. The index walk has the index tensor's shape;
 * the target's offset is its strides with the `dim` axis left to the index value. An out-of-range index
 * cannot throw inside a kernel, so it is skipped and recorded in the device error word, which the backend
 * reads back (and throws on) at the next read or sync.
 */
import type { DType } from '../../../dtype.js';
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

/**
 * Fused row kernels over the last axis: softmax / log-softmax forward and backward, and logprobs (the
 * log-softmax at one target per row, with the row's log-sum-exp saved) forward and backward. One block per
 * row; each pass streams the row from global memory (L2 keeps it for the next pass). Formulas are the CPU
 * backend's (cpu/softmax.ts), including -Infinity rows.
 */
import type { DType } from '../../../dtype.js';
import { C_TYPE, type KernelSource, source } from './common.js';
import { ROW_THREADS, blockReducers, rowsDtypeCheck } from './rows.js';

function fn(dtype: DType, name: string): string {
  return dtype === 'float32' ? `${name}f` : name;
}

/** Code computing `lse` of row `xr` (width W); every thread ends with it. */
function lseOfRow(dtype: DType): string {
  const T = C_TYPE[dtype];
  const inf = dtype === 'float32' ? 'ar1_inf_f()' : 'ar1_inf_d()';
  return `${T} mx = -${inf};
  for (long long j = threadIdx.x; j < W; j += blockDim.x) { ${T} v = xr[j]; mx = v > mx ? v : mx; }
  mx = ar1_block_max(mx);
  ${T} sum = (${T})0;
  if (mx != -${inf}) for (long long j = threadIdx.x; j < W; j += blockDim.x) sum += ${fn(dtype, 'exp')}(xr[j] - mx);
  sum = ar1_block_sum(sum);
  ${T} lse = mx == -${inf} ? mx : mx + ${fn(dtype, 'log')}(sum);`;
}

export function softmaxKernel(dtype: DType, log: boolean): KernelSource {
  rowsDtypeCheck('softmax', dtype);
  const T = C_TYPE[dtype];
  const name = `ar1_${log ? 'log_' : ''}softmax_${dtype}`;
  const body = `${blockReducers(dtype)}
extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${T}* __restrict__ out, const ${T}* __restrict__ x, long long rows, long long W) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const ${T}* xr = x + r * W;
    ${lseOfRow(dtype)}
    for (long long j = threadIdx.x; j < W; j += blockDim.x) {
      ${T} z = xr[j] - lse;
      out[r * W + j] = ${log ? 'z' : `${fn(dtype, 'exp')}(z)`};
    }
  }
}`;
  return source(name, body);
}

export function softmaxBackwardKernel(dtype: DType, log: boolean): KernelSource {
  rowsDtypeCheck('softmaxBackward', dtype);
  const T = C_TYPE[dtype];
  const name = `ar1_${log ? 'log_' : ''}softmax_backward_${dtype}`;
  const term = log ? 'g[j]' : 'g[j] * y[j]';
  const dx = log ? `g[j] - ${fn(dtype, 'exp')}(y[j]) * dot` : 'y[j] * (g[j] - dot)';
  const body = `${blockReducers(dtype)}
extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${T}* __restrict__ dx, const ${T}* __restrict__ yAll, const ${T}* __restrict__ gAll, long long rows, long long W) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const ${T}* y = yAll + r * W;
    const ${T}* g = gAll + r * W;
    ${T} dot = (${T})0;
    for (long long j = threadIdx.x; j < W; j += blockDim.x) dot += ${term};
    dot = ar1_block_sum(dot);
    for (long long j = threadIdx.x; j < W; j += blockDim.x) dx[r * W + j] = ${dx};
  }
}`;
  return source(name, body);
}

export function logprobsKernel(dtype: DType): KernelSource {
  rowsDtypeCheck('logprobs', dtype);
  const T = C_TYPE[dtype];
  const name = `ar1_logprobs_${dtype}`;
  const body = `${blockReducers(dtype)}
extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${T}* __restrict__ out, ${T}* __restrict__ lseOut, const ${T}* __restrict__ x, const int* __restrict__ targets, long long rows, long long W, int* err) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const ${T}* xr = x + r * W;
    ${lseOfRow(dtype)}
    if (threadIdx.x == 0) {
      int t = targets[r];
      lseOut[r] = lse;
      if (t < 0 || t >= W) { atomicExch(err, 3); out[r] = (${T})0; }
      else out[r] = xr[t] - lse;
    }
  }
}`;
  return source(name, body);
}

export function logprobsBackwardKernel(dtype: DType): KernelSource {
  rowsDtypeCheck('logprobsBackward', dtype);
  const T = C_TYPE[dtype];
  const name = `ar1_logprobs_backward_${dtype}`;
  const body = `extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${T}* __restrict__ dx, const ${T}* __restrict__ x, const int* __restrict__ targets, const ${T}* __restrict__ lse, const ${T}* __restrict__ grad, long long rows, long long W) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    ${T} z = lse[r], g = grad[r];
    int t = targets[r];
    for (long long j = threadIdx.x; j < W; j += blockDim.x) {
      ${T} v = -g * ${fn(dtype, 'exp')}(x[r * W + j] - z);
      dx[r * W + j] = j == t ? v + g : v;
    }
  }
}`;
  return source(name, body);
}

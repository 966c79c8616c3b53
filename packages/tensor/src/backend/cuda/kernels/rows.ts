/**
 * Block-wide reductions for the row kernels (softmax, logprobs, norms): one block per row, threads stride
 * over the row, then warp shuffles and a shared-memory step combine the partials. Every thread gets the
 * result (it is broadcast through shared memory).
 */
import { type DType, isHalf } from '../../../dtype.js';
import type { ScalarFunction } from '../../../kernel-ir/expr.js';
import { cFunction, cScalarOf } from '../../../kernel-ir/render-c.js';
import { C_TYPE } from './common.js';

export const ROW_THREADS = 256;

/** Device functions ar1_block_sum and ar1_block_max over the dtype (float32 or float64). */
export function blockReducers(dtype: DType): string {
  const T = C_TYPE[dtype];
  const inf = dtype === 'float32' ? 'ar1_inf_f()' : 'ar1_inf_d()';
  const reducer = (name: string, init: string, combine: string) => `__device__ ${T} ${name}(${T} v) {
  __shared__ ${T} part[32];
  for (int s = 16; s > 0; s >>= 1) { ${T} o = __shfl_xor_sync(0xffffffffu, v, s); v = ${combine}; }
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < (blockDim.x >> 5) ? part[threadIdx.x & 31] : ${init};
  for (int s = 16; s > 0; s >>= 1) { ${T} o = __shfl_xor_sync(0xffffffffu, v, s); v = ${combine}; }
  __syncthreads();
  return v;
}`;
  return [
    reducer('ar1_block_sum', `(${T})0`, 'v + o'),
    reducer('ar1_block_max', `-${inf}`, '(o > v ? o : v)'),
  ].join('\n');
}

/**
 * The row arithmetic of the kernel IR (kernel-ir/rows.ts) as device functions computing in `compute`
 * (float32 or float64), each under its IR name.
 */
export function rowFunctions(compute: DType, ...functions: ScalarFunction[]): string {
  return functions.map((f) => cFunction(f, cScalarOf(compute), f.name)).join('\n');
}

/** Throws unless the kernel takes `dtype`: float32 and float64, and the half types where `halves` says. */
export function rowsDtypeCheck(kernel: string, dtype: DType, halves = false): void {
  if (halves && isHalf(dtype)) return;
  if (dtype !== 'float32' && dtype !== 'float64')
    throw new Error(
      `cuda ${kernel}: expected float32 or float64${halves ? ', float16 or bfloat16' : ''}, got ${dtype}`,
    );
}

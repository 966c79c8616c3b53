/** The reference backend: pure TypeScript over typed arrays. Every other backend is tested against it. */
import type { DType, TypedArray } from '../../dtype.js';
import type { Backend, Kernels, Storage } from '../backend.js';
import { HALF_STORAGE_KERNELS, enableHalfCompute } from '../half-compute.js';
import { attention, attentionBackward } from './attention.js';
import { binary, copy, fill, unary, where } from './elementwise.js';
import { gather, scatterAdd } from './indexing.js';
import { matmul } from './matmul.js';
import { layerNorm, layerNormBackward, rmsNorm, rmsNormBackward } from './norms.js';
import { adamw } from './optim.js';
import { random } from './random.js';
import { reduce } from './reduce.js';
import { rotary } from './rotary.js';
import { type CpuStorage, allocStorage, freeStorage } from './storage.js';
import { logprobs, logprobsBackward, softmax, softmaxBackward } from './softmax.js';

const kernels: Kernels = {
  fill,
  copy,
  unary,
  binary,
  where,
  reduce,
  matmul,
  gather,
  scatterAdd,
  softmax,
  softmaxBackward,
  logprobs,
  logprobsBackward,
  layerNorm,
  layerNormBackward,
  rmsNorm,
  rmsNormBackward,
  attention,
  attentionBackward,
  rotary,
  adamw,
  random,
};

/** A CPU backend; `name` registers a second, independent instance (e.g. to test cross-device errors). */
export function createCpuBackend(name = 'cpu'): Backend {
  return enableHalfCompute({
    name,
    kernels: { ...kernels },
    // float16/bfloat16 are stored as their bits; fill and copy convert, the other kernels compute on
    // float32 copies.
    halfKernels: HALF_STORAGE_KERNELS,
    alloc: (dtype: DType, size: number) => allocStorage(dtype, size, name),
    free: freeStorage,
    write(storage: Storage, data: TypedArray, offset = 0) {
      (storage as CpuStorage).data.set(data, offset);
    },
    read: async (storage: Storage) => (storage as CpuStorage).data.slice(),
    readSync: (storage: Storage) => (storage as CpuStorage).data.slice(),
    sync: async () => {},
  });
}

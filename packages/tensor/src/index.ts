/**
 * @agent-r1/tensor — tensors with reverse-mode autograd, written from scratch. The CPU backend is built in;
 * other backends register themselves (see backend/backend.ts for the interface they implement).
 */
export { Tensor, type NestedArray, type TensorOrScalar } from './tensor.js';
export type { DType, FloatDType, TypedArray } from './dtype.js';
export { isFloat, isHalf, promoteTypes, statsDtype } from './dtype.js';
export {
  type HalfDType,
  decodeHalf,
  encodeHalf,
  halfBitsToNumber,
  toBfloat16Bits,
  toFloat16Bits,
  toHalfBits,
} from './half.js';
export { noGrad, enableGrad, isGradEnabled, type BackwardOptions } from './autograd.js';
export { tidy, keep, dispose, memory, type MemoryReport } from './memory.js';
export { Generator, manualSeed, getDefaultGenerator, threefry2x32 } from './random.js';
export { broadcastShapes, sizeOf, type Shape } from './shape.js';
import { registerBackend } from './backend/registry.js';
export {
  registerBackend,
  initBackend,
  getBackend,
  setDefaultDevice,
  getDefaultDevice,
  registerKernel,
  supportsDtype,
} from './backend/registry.js';
export { createCpuBackend } from './backend/cpu/index.js';
export {
  createWebGpuBackend,
  isSoftwareWebGpuAdapter,
  requestWebGpuDevice,
  type WebGpuBackend,
  type WebGpuDevice,
  type WebGpuOptions,
  type WebGpuMemory,
} from './backend/webgpu/index.js';
export { createCudaBackend, type CudaBackend, type CudaOptions } from './backend/cuda/index.js';
export {
  enableWasmKernels,
  disableWasmKernels,
  wasmKernelsEnabled,
  wasmSimdSupported,
  wasmRelaxedSimdSupported,
  wasmRelaxedSimdActive,
  setWasmRelaxedSimd,
  wasmThreads,
  waitForWasmWorkers,
  shutdownWasmWorkers,
  setWasmThreadHost,
  wasmWorkerInfo,
  wasmMemoryInfo,
  poisonWasmMemory,
  setWasmCallCheck,
  nodeThreadHost,
  webWorkerHost,
  type WasmKernelOptions,
  type WasmPoisonOptions,
  type WasmCallCheck,
  type ThreadHost,
  type WebWorkerGlobals,
} from './backend/wasm/index.js';
export type * from './backend/backend.js';
export { UNARY_OPS, BINARY_OPS } from './backend/backend.js';
export {
  tensor,
  zeros,
  ones,
  full,
  zerosLike,
  onesLike,
  fullLike,
  arange,
  eye,
  rand,
  randn,
  randint,
  uniform,
  normal,
  type TensorOptions,
  type RandomOptions,
} from './ops/creation.js';
export {
  add,
  sub,
  mul,
  div,
  pow,
  maximum,
  minimum,
  neg,
  abs,
  exp,
  log,
  sqrt,
  rsqrt,
  square,
  tanh,
  sigmoid,
  relu,
  gelu,
  silu,
  softplus,
  sin,
  cos,
  clamp,
  where,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  logicalNot,
  cast,
} from './ops/elementwise.js';
export {
  sum,
  mean,
  max,
  min,
  argmax,
  argmin,
  variance as var,
  sumToShape,
  type VarOptions,
} from './ops/reduce.js';
export { matmul } from './ops/linalg.js';
export {
  reshape,
  flatten,
  permute,
  transpose,
  slice,
  narrow,
  select,
  expand,
  squeeze,
  unsqueeze,
  split,
  concat,
  stack,
  contiguous,
  clone,
  copyInto,
} from './ops/movement.js';
export { gather, indexSelect, embedding, oneHot, scatterAdd } from './ops/indexing.js';
export {
  softmax,
  logSoftmax,
  logsumexp,
  logprobs,
  crossEntropy,
  layerNorm,
  rmsNorm,
  scaledDotProductAttention,
  rotaryEmbedding,
  dropout,
  type AttentionOptions,
  type CrossEntropyOptions,
  type DropoutOptions,
} from './ops/nn.js';
export { adamwUpdate, type AdamWHyper } from './ops/optim.js';

// Loaded on the first initBackend('cuda') only: CPU-only users never load koffi or the CUDA libraries.
registerBackend('cuda', async () => (await import('./backend/cuda/index.js')).createCudaBackend());

/// <reference types="@webgpu/types" />
/**
 * The WebGPU backend: storage in pooled GPUBuffers, kernels as hand-written WGSL (kernels/<family>.ts), work
 * batched into command encoders (queue.ts). Reads are asynchronous (`await tensor.data()`); there is no
 * readSync, because waiting for a GPU synchronously is not honest in JavaScript.
 */
import { type DType, type TypedArray, isHalf } from '../../dtype.js';
import type { Backend, Kernels, Storage, View } from '../backend.js';
import { HALF_STORAGE_KERNELS, enableHalfCompute } from '../half-compute.js';
import { BufferPool, type GpuStorage, USAGE, WEBGPU_DTYPES, checkDtype, gpuBytes } from './buffers.js';
import { type GpuContext, type WebGpuOptions, isSoftwareInfo, requestGpu } from './device.js';
import { attention } from './kernels/attention.js';
import { attentionBackward } from './kernels/attention-backward.js';
import { binary, copy, fill, unary, where } from './kernels/elementwise.js';
import { gather, scatterAdd } from './kernels/indexing.js';
import { matmul } from './kernels/matmul.js';
import { layerNorm, layerNormBackward, rmsNorm, rmsNormBackward } from './kernels/norms.js';
import { adamw } from './kernels/optim.js';
import { rotary } from './kernels/rotary.js';
import { random } from './kernels/random.js';
import { reduce } from './kernels/reduce.js';
import { logprobs, logprobsBackward, softmax, softmaxBackward } from './kernels/softmax.js';
import { GpuQueue } from './queue.js';

export type { WebGpuOptions, GpuContext as WebGpuDevice } from './device.js';

/** The adapter selection alone, e.g. to share one GPUDevice with another library (pass it back as `device`). */
export const requestWebGpuDevice = requestGpu;

/**
 * Whether a GPUAdapterInfo (or its text fields) names a software rasteriser (llvmpipe, lavapipe,
 * SwiftShader) rather than a GPU; `fallback` is the adapter's `isFallbackAdapter`.
 */
export const isSoftwareWebGpuAdapter = isSoftwareInfo;

export interface WebGpuMemory {
  /** Bytes of every GPU buffer this backend holds (live tensors plus the reuse pool). */
  allocatedBytes: number;
  /** Bytes held by live storages (by size class, so ≥ the tensors' own bytes). */
  inUseBytes: number;
  pooledBytes: number;
  buffers: number;
}

export interface WebGpuBackend extends Backend {
  /** The adapter in words (vendor, architecture, description), e.g. for benchmark tables. */
  readonly adapter: string;
  readonly features: ReadonlySet<string>;
  /** Which kernel variants run: 'software' on CPU rasterisers (no workgroup-memory tiling), else 'hardware'. */
  readonly kernelVariant: 'hardware' | 'software';
  memoryInfo(): WebGpuMemory;
  /** Destroys pooled buffers that no tensor holds. */
  trim(): void;
  /** Dispatch/submit/pipeline counters. */
  readonly stats: { dispatches: number; submits: number; pipelines: number };
}

/** With the command queue exposed, for this package's tests. */
export interface WebGpuBackendInternal extends WebGpuBackend {
  readonly queue: GpuQueue;
}

/**
 * `data` as the GPU lays it out (gpuBytes): a bool storage's bytes widened to u32 words, a half storage's
 * 16-bit patterns as they are, padded to a whole word; and back.
 */
function toGpuWords(data: TypedArray): ArrayBufferView {
  if (data instanceof Uint8Array) return Uint32Array.from(data);
  if (data instanceof Uint16Array && data.length % 2 === 1) {
    const padded = new Uint16Array(data.length + 1);
    padded.set(data);
    return padded;
  }
  return data;
}

function fromGpuWords(dtype: DType, bytes: ArrayBuffer, size: number): TypedArray {
  // `bytes` is already a copy of the mapped range: view it, do not copy again.
  if (dtype === 'float32') return new Float32Array(bytes, 0, size);
  if (dtype === 'int32') return new Int32Array(bytes, 0, size);
  if (isHalf(dtype)) return new Uint16Array(bytes, 0, size);
  return Uint8Array.from(new Uint32Array(bytes, 0, size));
}

/** A contiguous 1-D view of `size` elements of `storage` from element `offset`. */
function flatView(storage: GpuStorage, size: number, offset: number): View {
  return { storage, dtype: storage.dtype, shape: [size], strides: [1], offset };
}

export function createWebGpuBackendFromContext(ctx: GpuContext, name = 'webgpu'): WebGpuBackendInternal {
  const { device } = ctx;
  const pool = new BufferPool(device, Number(device.limits.maxStorageBufferBindingSize), name);
  const queue = new GpuQueue(device, pool, ctx.software, ctx.features.has('subgroups'));
  const write = (storage: Storage, data: TypedArray, offset = 0): void => {
    const s = storage as GpuStorage;
    if (data.length + offset > s.size)
      throw new Error(
        `webgpu write: ${data.length} elements at offset ${offset} overflow a storage of ${s.size}`,
      );
    if (isHalf(s.dtype) && (offset % 2 === 1 || (data.length % 2 === 1 && offset + data.length < s.size))) {
      // Halves that start or end inside a word whose other half is kept: writeBuffer writes whole words,
      // so they go through a temporary storage and the copy kernel, which stores each half on its own.
      const staging = pool.acquire(s.dtype, data.length);
      write(staging, data);
      copy(queue, flatView(staging, data.length, 0), flatView(s, data.length, offset));
      queue.release(staging);
      return;
    }
    // queue.writeBuffer runs before any unsubmitted dispatch: submit those that use this buffer first.
    if (queue.isPending(s.buffer)) queue.flush();
    queue.openScopes();
    const words = toGpuWords(data);
    device.queue.writeBuffer(
      s.buffer,
      gpuBytes(s.dtype, offset),
      words.buffer,
      words.byteOffset,
      gpuBytes(s.dtype, data.length),
    );
  };
  const kernels: Kernels = {
    fill: (out, value) => fill(queue, out, value),
    copy: (src, dst) => copy(queue, src, dst),
    unary: (op, x, out) => unary(queue, op, x, out),
    binary: (op, a, b, out) => binary(queue, op, a, b, out),
    where: (c, a, b, out) => where(queue, c, a, b, out),
    reduce: (op, x, axes, out) => reduce(queue, op, x, axes, out),
    matmul: (a, b, out) => matmul(queue, a, b, out),
    gather: (x, dim, index, out) => gather(queue, x, dim, index, out),
    scatterAdd: (dst, dim, index, src) => scatterAdd(queue, dst, dim, index, src),
    softmax: (x, out, log) => softmax(queue, x, out, log),
    softmaxBackward: (y, dy, dx, log) => softmaxBackward(queue, y, dy, dx, log),
    logprobs: (logits, targets, out, lse) => logprobs(queue, logits, targets, out, lse),
    logprobsBackward: (logits, targets, lse, grad, dlogits) =>
      logprobsBackward(queue, logits, targets, lse, grad, dlogits),
    layerNorm: (args) => layerNorm(queue, args),
    layerNormBackward: (args) => layerNormBackward(queue, args),
    rmsNorm: (args) => rmsNorm(queue, args),
    rmsNormBackward: (args) => rmsNormBackward(queue, args),
    attention: (args) => attention(queue, args),
    attentionBackward: (args) => attentionBackward(queue, args),
    rotary: (args) => rotary(queue, args),
    adamw: (args) => adamw(queue, args),
    random: (out, args) => random(queue, out, args),
  };
  return enableHalfCompute({
    name,
    adapter: ctx.description,
    features: ctx.features,
    kernelVariant: ctx.software ? 'software' : 'hardware',
    kernels,
    // float16/bfloat16 are kept two to a 32-bit word (half the memory of float32); fill and copy convert,
    // the others compute on float32 copies.
    halfKernels: HALF_STORAGE_KERNELS,
    dtypes: WEBGPU_DTYPES,
    queue,
    stats: queue.stats,
    alloc(dtype: DType, size: number): Storage {
      checkDtype('alloc', dtype);
      queue.throwIfFailed();
      queue.openScopes();
      return pool.acquire(dtype, size);
    },
    free(storage: Storage): void {
      queue.release(storage as GpuStorage);
    },
    write,
    async read(storage: Storage): Promise<TypedArray> {
      const s = storage as GpuStorage;
      const bytes = gpuBytes(s.dtype, Math.max(1, s.size));
      const staging = device.createBuffer({
        size: bytes,
        usage: USAGE.MAP_READ | USAGE.COPY_DST,
        label: 'readback',
      });
      try {
        queue.copy(s.buffer, staging, bytes);
        await queue.check();
        await staging.mapAsync(1 /* GPUMapMode.READ */);
        return fromGpuWords(s.dtype, staging.getMappedRange().slice(0), s.size);
      } finally {
        staging.destroy();
      }
    },
    sync: () => queue.sync(),
    memoryInfo: () => ({
      allocatedBytes: pool.allocatedBytes,
      inUseBytes: pool.inUseBytes,
      pooledBytes: pool.pooledBytes,
      buffers: pool.buffers,
    }),
    trim: () => {
      queue.flush();
      pool.trim();
    },
  });
}

/** Creates the backend on the best adapter available (see device.ts); register it with `registerBackend`. */
export async function createWebGpuBackend(
  options: WebGpuOptions = {},
  name = 'webgpu',
): Promise<WebGpuBackendInternal> {
  return createWebGpuBackendFromContext(await requestGpu(options), name);
}

/**
 * The cuda backend: NVIDIA GPUs driven from TypeScript through the CUDA driver API and NVRTC (via koffi),
 * with kernels generated as CUDA C and compiled on first use. See docs/cuda.md.
 *
 *   import { initBackend } from '@agent-r1/tensor';
 *   await initBackend('cuda'); // throws, naming what is missing, on a machine without a driver
 */
import { type DType, type TypedArray, bytesPerElement, typedArrayFor } from '../../dtype.js';
import type { Backend, Storage } from '../backend.js';
import type { AllocatorStats } from './allocator.js';
import { enableHalfCompute } from '../half-compute.js';
import { CUDA_HALF_KERNELS, cudaKernels } from './kernels.js';
import type { CudaStorage } from './launcher.js';
// Types only: the runtime (FFI, the file system) loads when a backend is created, so this module, and the
// package index that imports it, load in a browser too.
import type { DeviceInfo, MatmulImpl } from './runtime.js';

export interface CudaBackend extends Backend {
  readonly device: DeviceInfo;
  /** The caching allocator's counts, and the driver's view of device memory. */
  memoryStats(): AllocatorStats & { deviceFree: number; deviceTotal: number };
  /** Kernels compiled, read from the disk cache, or found in memory so far. */
  readonly compileStats: { compiled: number; fromDisk: number; fromMemory: number };
  /** Blocks the thread until queued work is done (benchmarks time with it). */
  synchronize(): void;
  /** Returns cached device memory to the driver. */
  emptyCache(): void;
}

export interface CudaOptions {
  /** Device ordinal (default 0). */
  device?: number;
  /** Registered name (default 'cuda'). */
  name?: string;
  /**
   * Matmuls through cuBLAS where libcublas is found ('auto', the default), always ('cublas': an error
   * naming it when it is missing) or through this backend's own tiled kernel ('kernels').
   */
  matmul?: MatmulImpl;
  /** Let cuBLAS run float32 matmuls on TF32 tensor cores (faster, 10-bit mantissas; off by default). */
  tf32?: boolean;
}

export async function createCudaBackend(options: CudaOptions = {}): Promise<CudaBackend> {
  const name = options.name ?? 'cuda';
  const { CudaRuntime } = await import('./runtime.js');
  const rt = await CudaRuntime.create(options.device ?? 0, { matmul: options.matmul, tf32: options.tf32 });
  const own = (storage: Storage): CudaStorage => {
    if (storage.backend !== name)
      throw new Error(`cuda: storage belongs to '${storage.backend}', not '${name}'`);
    return storage as CudaStorage;
  };
  return enableHalfCompute({
    name,
    device: rt.info,
    kernels: cudaKernels(rt),
    halfKernels: CUDA_HALF_KERNELS,
    compileStats: rt.images.stats,
    alloc(dtype: DType, size: number): CudaStorage {
      const block = rt.allocator.alloc(size * bytesPerElement(dtype));
      return { backend: name, dtype, size, ptr: block.ptr, block };
    },
    free(storage: Storage) {
      rt.allocator.free(own(storage).block);
    },
    write(storage: Storage, data: TypedArray, offset = 0) {
      const s = own(storage);
      if (offset + data.length > s.size)
        throw new Error(`cuda write: ${data.length} elements at ${offset} overflow a storage of ${s.size}`);
      rt.upload(s.ptr + BigInt(offset * bytesPerElement(s.dtype)), data);
    },
    async read(storage: Storage): Promise<TypedArray> {
      const s = own(storage);
      const out = typedArrayFor(s.dtype, s.size);
      await rt.download(s.ptr, out);
      return out;
    },
    /**
     * A blocking read: it waits for the stream, then copies. Honest on CUDA (unlike WebGPU, where mapping
     * is asynchronous), and what gradcheck-style host loops and `.to('cpu')` need; prefer `await read()`.
     */
    readSync(storage: Storage): TypedArray {
      const s = own(storage);
      const out = typedArrayFor(s.dtype, s.size);
      rt.downloadSync(s.ptr, out);
      return out;
    },
    sync: () => rt.idle(),
    synchronize: () => rt.synchronize(),
    emptyCache: () => rt.allocator.releaseCached(),
    memoryStats() {
      const { free, total } = rt.memoryInfo();
      return { ...rt.allocator.stats(), deviceFree: free, deviceTotal: total };
    },
  });
}

/// <reference types="@webgpu/types" preserve="true" />
/**
 * GPU storage and the buffer pool. Buffers are rounded up to a size class (four classes per power of two, so
 * at most 19% is wasted) and recycled by class. A freed buffer that queued-but-unsubmitted work still reads
 * is not reusable yet: the queue hands it back only after that work is submitted (see queue.ts), because a
 * later `writeBuffer` would otherwise overwrite it before the pending dispatch reads it.
 */
import { type DType, isHalf } from '../../dtype.js';
import type { Storage } from '../backend.js';

// GPUBufferUsage bits, spelled out so Node needs no WebGPU globals.
export const USAGE = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const;
const STORAGE_USAGE = USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST;

export interface GpuStorage extends Storage {
  readonly buffer: GPUBuffer;
  /** Bytes of the underlying buffer (its size class), ≥ gpuBytes(dtype, size). */
  readonly capacity: number;
  freed: boolean;
}

/**
 * Bytes of `size` elements on the GPU: 4 each, bool as u32 0/1 (WGSL has no 8-bit storage), except the half
 * types, two to a u32 word (element i in bits 16·(i mod 2) of word i / 2, the layout of a little-endian
 * Uint16Array), so that they take half the memory of float32. Rounded up to whole words.
 */
export function gpuBytes(dtype: DType, size: number): number {
  return isHalf(dtype) ? 4 * Math.ceil(size / 2) : 4 * size;
}

/** The dtypes WebGPU storage holds: every one but float64, which WGSL does not have. */
export const WEBGPU_DTYPES: ReadonlySet<DType> = new Set(['float32', 'float16', 'bfloat16', 'int32', 'bool']);

export function checkDtype(kernel: string, dtype: DType): void {
  if (!WEBGPU_DTYPES.has(dtype))
    throw new Error(
      `webgpu ${kernel}: float64 is not supported on WebGPU (WGSL has no f64); cast to float32`,
    );
}

/** The smallest size class holding `bytes`: 256 bytes up, then 4 steps per power of two. */
export function sizeClass(bytes: number): number {
  if (bytes <= 256) return 256;
  const pow = 2 ** Math.floor(Math.log2(bytes - 1));
  const step = pow / 4;
  return Math.ceil(bytes / step) * step;
}

export class BufferPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  /** Bytes of every live GPU buffer (in use or pooled) and of those held by live storages. */
  allocatedBytes = 0;
  inUseBytes = 0;
  pooledBytes = 0;
  buffers = 0;

  constructor(
    private readonly device: GPUDevice,
    private readonly maxBufferSize: number,
    private readonly backendName = 'webgpu',
    /** Pooled bytes above this are destroyed rather than kept. */
    private readonly maxPooledBytes = 512 * 2 ** 20,
  ) {}

  acquire(dtype: DType, size: number): GpuStorage {
    checkDtype('alloc', dtype);
    const capacity = sizeClass(gpuBytes(dtype, Math.max(1, size)));
    if (capacity > this.maxBufferSize) {
      throw new Error(
        `webgpu alloc: ${size} ${dtype} elements (${capacity} bytes) exceed the device's maxBufferSize of ${this.maxBufferSize} bytes`,
      );
    }
    let buffer = this.free.get(capacity)?.pop();
    if (buffer) this.pooledBytes -= capacity;
    else {
      buffer = this.device.createBuffer({
        size: capacity,
        usage: STORAGE_USAGE,
        label: `tensor ${dtype}[${size}]`,
      });
      this.allocatedBytes += capacity;
      this.buffers++;
    }
    this.inUseBytes += capacity;
    return { backend: this.backendName, dtype, size, buffer, capacity, freed: false };
  }

  /** Returns a buffer to the pool; the caller guarantees no unsubmitted work reads it. */
  release(storage: GpuStorage): void {
    this.inUseBytes -= storage.capacity;
    if (this.pooledBytes + storage.capacity > this.maxPooledBytes) {
      storage.buffer.destroy();
      this.allocatedBytes -= storage.capacity;
      this.buffers--;
      return;
    }
    let list = this.free.get(storage.capacity);
    if (!list) {
      list = [];
      this.free.set(storage.capacity, list);
    }
    list.push(storage.buffer);
    this.pooledBytes += storage.capacity;
  }

  /** Destroys every pooled buffer (e.g. to measure, or to give memory back). */
  trim(): void {
    for (const [capacity, list] of this.free) {
      for (const b of list) {
        b.destroy();
        this.allocatedBytes -= capacity;
        this.buffers--;
      }
    }
    this.free.clear();
    this.pooledBytes = 0;
  }
}

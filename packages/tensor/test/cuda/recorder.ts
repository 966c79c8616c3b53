/**
 * A recording double of the cuda Launcher: kernels "run" by being written down with their arguments, and
 * views live on fake storages with made-up device addresses. It lets the host side of the backend (shape
 * merging, layouts, argument lists, launch geometry) be exercised on a machine without a GPU.
 */
import type { DType } from '../../src/dtype.js';
import { contiguousStrides, sizeOf } from '../../src/shape.js';
import type { View } from '../../src/backend/backend.js';
import type { KernelArg } from '../../src/backend/cuda/args.js';
import type { KernelSource } from '../../src/backend/cuda/kernels/common.js';
import type { CudaStorage, Launcher } from '../../src/backend/cuda/launcher.js';

export interface Launch {
  kernel: KernelSource;
  grid: readonly number[];
  block: number;
  args: readonly KernelArg[];
}

export class Recorder implements Launcher {
  readonly multiprocessors = 132;
  readonly errorWord = 0xe000n;
  readonly launches: Launch[] = [];
  readonly zeroed: { ptr: bigint; bytes: number }[] = [];
  private next = 0x10000000n;
  scratchLive = 0;
  /** A vendor GEMM a test may plug in (absent: matmuls launch the kernel). */
  gemm?: Launcher['gemm'];

  launch(kernel: KernelSource, grid: readonly number[], block: number, args: readonly KernelArg[]): void {
    this.launches.push({ kernel, grid, block, args });
  }
  scratch(bytes: number) {
    this.scratchLive++;
    return { ptr: this.address(), bytes };
  }
  release(): void {
    this.scratchLive--;
  }
  zero(ptr: bigint, bytes: number): void {
    this.zeroed.push({ ptr, bytes });
  }
  address(): bigint {
    this.next += 0x1000000n;
    return this.next;
  }

  /** A contiguous view on a fresh fake storage. */
  view(dtype: DType, shape: readonly number[]): View {
    const size = sizeOf(shape);
    const storage: CudaStorage = {
      backend: 'cuda',
      dtype,
      size,
      ptr: this.address(),
      block: { ptr: 0n, bytes: 0 },
    };
    return { storage, dtype, shape, strides: contiguousStrides(shape), offset: 0 };
  }
}

/** A view of `base`'s storage with other shape, strides and offset (transposes, broadcasts, slices). */
export function restride(base: View, shape: readonly number[], strides: readonly number[], offset = 0): View {
  return { ...base, shape, strides, offset };
}

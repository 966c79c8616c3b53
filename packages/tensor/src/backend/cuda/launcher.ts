/**
 * The seam between kernel launchers (kernels/*.ts) and the device runtime: what a launcher may ask of the
 * device, and how a View becomes a device address. Tests drive the launchers through a recording double
 * of this interface, so argument lists are checked against kernel signatures without a GPU.
 */
import { bytesPerElement, statsDtype } from '../../dtype.js';
import { isContiguous } from '../../shape.js';
import type { Storage, View } from '../backend.js';
import type { KernelArg } from './args.js';
import type { Block } from './allocator.js';
import type { GemmPointers } from './cublas.js';
import type { GemmPlan } from './gemm-plan.js';
import type { KernelSource } from './kernels/common.js';

export interface CudaStorage extends Storage {
  /** Device address of element 0. */
  readonly ptr: bigint;
  readonly block: Block;
}

export interface Launcher {
  readonly multiprocessors: number;
  launch(kernel: KernelSource, grid: readonly number[], block: number, args: readonly KernelArg[]): void;
  /** Device address of the int that kernels set on a bad index. */
  readonly errorWord: bigint;
  /** Scratch memory for one call's intermediate results, handed back with `release` (stream-ordered). */
  scratch(bytes: number): Block;
  release(block: Block): void;
  /** Zeroes bytes on the stream. */
  zero(ptr: bigint, bytes: number): void;
  /** A vendor GEMM (cuBLAS) for the matmuls it takes as they are; absent when matmuls use our kernels. */
  gemm?(plan: GemmPlan, pointers: GemmPointers): void;
}

/** Device address of a view's first element. */
export function ptrOf(view: View): bigint {
  const s = view.storage as CudaStorage;
  if (typeof s.ptr !== 'bigint')
    throw new Error(`cuda: got a view of a '${view.storage.backend}' storage; move the tensor to cuda first`);
  return s.ptr + BigInt(view.offset * bytesPerElement(view.dtype));
}

export function ptrOrNull(view: View | null): bigint {
  return view ? ptrOf(view) : 0n;
}

/** Grid size for a grid-stride loop over n items: enough blocks to fill the GPU, no more than needed. */
export function gridFor(n: number, threads: number, launcher: Launcher): number {
  return Math.max(1, Math.min(Math.ceil(n / threads), launcher.multiprocessors * 32));
}

/** Fused kernels read rows directly: the op layer promises contiguous inputs; fail loudly if it did not. */
export function assertDense(kernel: string, ...views: (View | null)[]): void {
  for (const v of views) {
    if (v && !isContiguous(v.shape, v.strides))
      throw new Error(`cuda ${kernel}: expected a contiguous input of shape [${v.shape}]`);
  }
}

export function sameDtype(kernel: string, ...views: (View | null)[]): void {
  const first = views.find((v) => v)?.dtype;
  for (const v of views)
    if (v && v.dtype !== first)
      throw new Error(`cuda ${kernel}: operands must share one dtype (${first} vs ${v.dtype})`);
}

/**
 * The statistics a fused op saves for its backward (a norm's mean and rstd, a log-sum-exp) are in
 * statsDtype(input.dtype): float32 for half inputs, else the input's dtype.
 */
export function assertStatsDtype(kernel: string, input: View, stats: Record<string, View>): void {
  const want = statsDtype(input.dtype);
  for (const [what, v] of Object.entries(stats))
    if (v.dtype !== want)
      throw new Error(`cuda ${kernel}: ${what} must be ${want} for ${input.dtype} input, got ${v.dtype}`);
}

/** [rows, width] of a contiguous view read as rows of its last axis. */
export function rowsOf(v: View): [number, number] {
  const width = v.shape.length === 0 ? 1 : v.shape[v.shape.length - 1];
  const size = v.shape.reduce((a, b) => a * b, 1);
  return [width === 0 ? 0 : size / width, width];
}

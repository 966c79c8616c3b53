/**
 * WebAssembly SIMD kernels for the CPU backend, emitted as bytecode from TypeScript (./builder.ts, ./emit/),
 * run on the main thread and worker threads over one shared memory (./runtime.ts, ./pool.ts).
 * `enableWasmKernels()` swaps them into the 'cpu' backend through `registerKernel` and, by default, has the
 * backend allocate float32 tensors in that memory (./arena.ts); `disableWasmKernels()` puts the plain
 * TypeScript kernels and the JS heap back. Float32 only: other dtypes and layouts fall back per call.
 */
import type { Kernels } from '../backend.js';
import { setFloat32Arena } from '../cpu/storage.js';
import { getBackend, registerKernel } from '../registry.js';
import { wasmArena } from './arena.js';
import { attention, attentionBackward } from './attention.js';
import { binary, unary } from './elementwise.js';
import { copy, fill } from './fill-copy.js';
import { gather, scatterAdd } from './indexing.js';
import { matmul } from './matmul.js';
import { layerNorm, layerNormBackward, rmsNorm, rmsNormBackward } from './norms.js';
import { adamw } from './optim.js';
import { rotary } from './rotary.js';
import { setThreads, wasmSimdSupported } from './runtime.js';
import { logprobs, logprobsBackward, softmax, softmaxBackward } from './softmax.js';

export { poisonBlocks as poisonWasmMemory, type PoisonOptions as WasmPoisonOptions } from './arena.js';
export { buildKernelModule } from './kernels.js';
export type { ThreadHost } from './pool.js';
export { nodeThreadHost } from './node-host.js';
export { type WebWorkerGlobals, webWorkerHost } from './web-host.js';
export type { CallCheck as WasmCallCheck } from './call-check.js';
export {
  getThreads as wasmThreads,
  setCallCheck as setWasmCallCheck,
  setThreadHost as setWasmThreadHost,
  shutdownWorkers as shutdownWasmWorkers,
  waitForWorkers as waitForWasmWorkers,
  setWasmRelaxedSimd,
  wasmRelaxedSimdActive,
  wasmRelaxedSimdSupported,
  wasmSimdSupported,
  workerInfo as wasmWorkerInfo,
  memoryInfo as wasmMemoryInfo,
} from './runtime.js';
export { matmul as wasmMatmul } from './matmul.js';
export { softmax as wasmSoftmax, logprobs as wasmLogprobs } from './softmax.js';

/** The kernels this module replaces; each falls back to the TypeScript kernel where it does not apply. */
export const WASM_KERNELS = {
  matmul,
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
  binary,
  unary,
  fill,
  copy,
  adamw,
  rotary,
  gather,
  scatterAdd,
} satisfies Partial<Kernels>;
export type WasmKernelName = keyof typeof WASM_KERNELS;

export interface WasmKernelOptions {
  /** Threads for large kernels, the main thread included (default: hardware threads, at most 8). */
  threads?: number;
  /** Register only these kernels (default: all of WASM_KERNELS). */
  only?: readonly WasmKernelName[];
  /**
   * Allocate the CPU backend's float32 tensors in the wasm memory, so kernels use them in place instead of
   * copying (default true; only where that memory is shared, i.e. where SharedArrayBuffer exists). Tensors
   * already allocated stay where they are.
   */
  residentTensors?: boolean;
}

let saved: Partial<Pick<Kernels, WasmKernelName>> | undefined;

/**
 * Registers the wasm kernels on the 'cpu' backend. Returns false (and changes nothing) where the engine
 * lacks WebAssembly SIMD. Calling it again is harmless (and applies new options).
 */
export function enableWasmKernels(options: WasmKernelOptions = {}): boolean {
  if (!wasmSimdSupported()) return false;
  if (options.threads !== undefined) setThreads(options.threads);
  disableWasmKernels();
  const kernels = getBackend('cpu').kernels;
  const names = options.only ?? (Object.keys(WASM_KERNELS) as WasmKernelName[]);
  const keep: Partial<Record<WasmKernelName, unknown>> = {};
  for (const name of names) {
    keep[name] = kernels[name];
    registerKernel('cpu', name, WASM_KERNELS[name] as Kernels[typeof name]);
  }
  saved = keep as Partial<Pick<Kernels, WasmKernelName>>;
  if (options.residentTensors ?? true) setFloat32Arena(wasmArena());
  return true;
}

/** Restores the kernels that `enableWasmKernels` replaced. */
export function disableWasmKernels(): void {
  if (!saved) return;
  setFloat32Arena(undefined);
  for (const [name, impl] of Object.entries(saved))
    registerKernel('cpu', name as WasmKernelName, impl as Kernels[WasmKernelName]);
  saved = undefined;
}

/** Whether the wasm kernels are registered on the 'cpu' backend right now. */
export function wasmKernelsEnabled(): boolean {
  return saved !== undefined;
}

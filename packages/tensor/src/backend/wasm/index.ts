/**
 * WebAssembly SIMD kernels for the CPU backend, emitted as bytecode from TypeScript (./builder.ts,
 * ./kernels.ts). `enableWasmKernels()` swaps them into the 'cpu' backend through `registerKernel`;
 * `disableWasmKernels()` puts the plain TypeScript kernels back. Float32 only: other dtypes fall back.
 */
import type { Kernels } from '../backend.js';
import { getBackend, registerKernel } from '../registry.js';
import { matmul } from './matmul.js';
import { wasmSimdSupported } from './runtime.js';
import { logprobs, softmax } from './softmax.js';

export { wasmSimdSupported } from './runtime.js';
export { buildKernelModule } from './kernels.js';
export { matmul as wasmMatmul } from './matmul.js';
export { softmax as wasmSoftmax, logprobs as wasmLogprobs } from './softmax.js';

const WASM_KERNELS = { matmul, softmax, logprobs } satisfies Partial<Kernels>;
type WasmKernelName = keyof typeof WASM_KERNELS;

let saved: Pick<Kernels, WasmKernelName> | undefined;

/**
 * Registers the wasm matmul, softmax and logprobs on the 'cpu' backend. Returns false (and changes
 * nothing) where the engine lacks WebAssembly SIMD. Calling it again is harmless.
 */
export function enableWasmKernels(): boolean {
  if (!wasmSimdSupported()) return false;
  const kernels = getBackend('cpu').kernels;
  if (!saved) saved = { matmul: kernels.matmul, softmax: kernels.softmax, logprobs: kernels.logprobs };
  for (const name of Object.keys(WASM_KERNELS) as WasmKernelName[])
    registerKernel('cpu', name, WASM_KERNELS[name]);
  return true;
}

/** Restores the kernels that `enableWasmKernels` replaced. */
export function disableWasmKernels(): void {
  if (!saved) return;
  for (const name of Object.keys(saved) as WasmKernelName[]) registerKernel('cpu', name, saved[name]);
  saved = undefined;
}

/** Whether the wasm kernels are registered on the 'cpu' backend right now. */
export function wasmKernelsEnabled(): boolean {
  return getBackend('cpu').kernels.matmul === matmul;
}

/**
 * Getting the run's tensor backend ready before any model is built: GPU backends are created (they load
 * their runtime lazily), and on the CPU the WebAssembly SIMD kernels (on worker threads) replace the plain
 * TypeScript ones unless `cpuKernels` is 'typescript'. Returns a line that says what the run computes on.
 */
import { disableWasmKernels, enableWasmKernels, initBackend, wasmThreads } from '@agent-r1/tensor';
import type { TrainConfig } from './config.js';

export async function prepareBackend(
  config: Pick<TrainConfig, 'backend' | 'cpuKernels' | 'threads'>,
): Promise<string> {
  if (config.backend !== 'cpu') {
    await initBackend(config.backend);
    return `backend: ${config.backend}`;
  }
  if (config.cpuKernels === 'wasm') {
    const threads = config.threads > 0 ? config.threads : undefined;
    if (enableWasmKernels({ threads }))
      return `backend: cpu, WebAssembly SIMD kernels on ${wasmThreads()} thread(s)`;
    return 'backend: cpu, TypeScript kernels (this engine has no WebAssembly SIMD)';
  }
  disableWasmKernels();
  return 'backend: cpu, TypeScript kernels';
}

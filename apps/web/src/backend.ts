/**
 * The page's tensor backend: WebGPU where navigator.gpu gives an adapter, else the WebAssembly SIMD
 * kernels (on Web Workers when the page is cross-origin isolated; their matmul in relaxed SIMD where the
 * browser has it), else the plain TypeScript kernels. `?backend=wasm` in the URL skips WebGPU, and
 * `?simd=128` keeps the kernels to plain SIMD128, whose results are Node 20's to the bit.
 */
import {
  createWebGpuBackend,
  enableWasmKernels,
  registerBackend,
  setWasmRelaxedSimd,
  wasmRelaxedSimdActive,
  wasmThreads,
} from '@agent-r1/tensor';

export interface PageBackend {
  /** The tensor device the models live on. */
  device: 'webgpu' | 'cpu';
  kind: 'webgpu' | 'wasm' | 'typescript';
  /** What the page computes on, in words. */
  line: string;
}

/** Why WebGPU is not used, or null when an adapter is there. */
async function webGpuAdapter(): Promise<{ adapter: GPUAdapter | null; why: string }> {
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) return { adapter: null, why: 'this browser has no navigator.gpu' };
  try {
    const adapter = await gpu.requestAdapter();
    return adapter ? { adapter, why: '' } : { adapter: null, why: 'navigator.gpu gave no adapter' };
  } catch (e) {
    return { adapter: null, why: `navigator.gpu.requestAdapter failed: ${(e as Error).message}` };
  }
}

export async function setUpBackend(
  prefer: 'auto' | 'wasm' = 'auto',
  options: { relaxedSimd?: boolean } = {},
): Promise<PageBackend> {
  let why = 'WebAssembly asked for in the URL';
  if (prefer === 'auto') {
    const found = await webGpuAdapter();
    why = found.why;
    if (found.adapter) {
      try {
        const backend = await createWebGpuBackend();
        registerBackend('webgpu', backend);
        return { device: 'webgpu', kind: 'webgpu', line: `WebGPU: ${backend.adapter}` };
      } catch (e) {
        why = `WebGPU did not start: ${(e as Error).message}`;
      }
    }
  }
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  const threads = isolated ? Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1)) : 1;
  setWasmRelaxedSimd(options.relaxedSimd ?? true);
  if (enableWasmKernels({ threads })) {
    const simd = wasmRelaxedSimdActive() ? 'relaxed SIMD' : 'SIMD';
    return {
      device: 'cpu',
      kind: 'wasm',
      line: `WebAssembly ${simd} kernels on ${wasmThreads()} thread(s) (${why})`,
    };
  }
  return { device: 'cpu', kind: 'typescript', line: `TypeScript kernels (no WebAssembly SIMD; ${why})` };
}

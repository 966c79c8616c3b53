/**
 * Getting the run's tensor backend ready before any model is built: GPU backends are created (they load
 * their runtime lazily), and on the CPU the WebAssembly SIMD kernels (on worker threads) replace the plain
 * TypeScript ones unless `cpuKernels` is 'typescript'. `backend=auto` picks CUDA where it loads, WebGPU
 * where a GPU adapter is found, and the CPU otherwise. Returns a line that says what the run computes on.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import {
  disableWasmKernels,
  enableWasmKernels,
  initBackend,
  isSoftwareWebGpuAdapter,
  wasmRelaxedSimdActive,
  wasmThreads,
} from '@agent-r1/tensor';
import type { TrainConfig } from './config.js';

/** The adapter Dawn's default backend (Vulkan, Metal or D3D12) offers, in words. */
export interface AdapterProbe {
  /** Vendor, architecture, device and description, space-separated. */
  text: string;
  /** The adapter's `isFallbackAdapter`. */
  fallback: boolean;
}

// Run in a child process: Dawn and the drivers write their complaints about a machine without a GPU to the
// process's stderr, which the child keeps from the user, and a driver that crashes takes only the child.
const PROBE_SCRIPT = `
const { create } = await import(process.argv[1]);
const adapter = await create([]).requestAdapter({ powerPreference: 'high-performance' });
const info = adapter?.info;
const text = [info?.vendor, info?.architecture, info?.device, info?.description].filter(Boolean).join(' ');
process.stdout.write('\\n' + JSON.stringify(adapter ? { text, fallback: info.isFallbackAdapter === true } : null) + '\\n');
process.exit(0);
`;

/** The GPU adapter of this machine as Node's `webgpu` package (Dawn) sees it; null without one or the package. */
export function probeGpuAdapter(timeoutMs = 30_000): AdapterProbe | null {
  let dawn: string;
  try {
    dawn = pathToFileURL(createRequire(import.meta.url).resolve('webgpu')).href;
  } catch {
    return null;
  }
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE_SCRIPT, dawn], {
    encoding: 'utf8',
    timeout: timeoutMs,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const last = (child.stdout ?? '').trim().split('\n').at(-1) ?? '';
  try {
    const found = JSON.parse(last) as AdapterProbe | null;
    return found && typeof found.text === 'string' ? found : null;
  } catch {
    return null;
  }
}

/** Whether the probe found a GPU rather than nothing or a software rasteriser (llvmpipe). */
export function isGpuAdapter(found: AdapterProbe | null): found is AdapterProbe {
  return found !== null && !isSoftwareWebGpuAdapter({ description: found.text }, found.fallback);
}

/**
 * `backend=auto`: CUDA where its driver and NVRTC load, else WebGPU where a GPU adapter is found (not a
 * software rasteriser, which computes far slower than the CPU backend), else the CPU.
 */
async function pickAutoBackend(probe: () => AdapterProbe | null): Promise<{ name: string; why: string }> {
  try {
    await initBackend('cuda');
    return { name: 'cuda', why: ' (auto: a CUDA device)' };
  } catch {
    const found = probe();
    if (!isGpuAdapter(found)) return { name: 'cpu', why: ' (auto: no GPU found)' };
    try {
      await initBackend('webgpu');
      return { name: 'webgpu', why: ` (auto: no CUDA driver; the WebGPU adapter ${found.text})` };
    } catch (err) {
      return {
        name: 'cpu',
        why: ` (auto: no CUDA driver; the WebGPU adapter ${found.text} did not start: ${(err as Error).message})`,
      };
    }
  }
}

/**
 * Initialises `config.backend`; `auto` is first replaced, in `config`, by the backend it picks (`probe`
 * looks for a WebGPU adapter: a child process by default).
 */
export async function prepareBackend(
  config: Pick<TrainConfig, 'backend' | 'cpuKernels' | 'threads'>,
  probe: () => AdapterProbe | null = probeGpuAdapter,
): Promise<string> {
  let why = '';
  if (config.backend === 'auto') {
    const picked = await pickAutoBackend(probe);
    config.backend = picked.name;
    why = picked.why;
  }
  if (config.backend !== 'cpu') {
    await initBackend(config.backend);
    return `backend: ${config.backend}${why}`;
  }
  if (config.cpuKernels === 'wasm') {
    const threads = config.threads > 0 ? config.threads : undefined;
    if (enableWasmKernels({ threads })) {
      const simd = wasmRelaxedSimdActive() ? 'relaxed SIMD' : 'SIMD';
      return `backend: cpu, WebAssembly ${simd} kernels on ${wasmThreads()} thread(s)${why}`;
    }
    return `backend: cpu, TypeScript kernels (this engine has no WebAssembly SIMD)${why}`;
  }
  disableWasmKernels();
  return `backend: cpu, TypeScript kernels${why}`;
}

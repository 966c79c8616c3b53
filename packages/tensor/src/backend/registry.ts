/** Backends by name, the default device, and replacing one kernel of a backend by a faster one. */
import { createCpuBackend } from './cpu/index.js';
import type { DType } from '../dtype.js';
import type { Backend, KernelName, Kernels } from './backend.js';
import { withHalfCompute } from './half-compute.js';

type BackendFactory = () => Backend | Promise<Backend>;

const ready = new Map<string, Backend>([['cpu', createCpuBackend()]]);
const factories = new Map<string, BackendFactory>([
  // Loaded on first initBackend('webgpu') only: CPU-only users never load the GPU code or its bindings.
  ['webgpu', async () => (await import('./webgpu/index.js')).createWebGpuBackend()],
]);
let defaultDevice = 'cpu';

/** Registers a backend, or a factory that creates it on the first `initBackend(name)`. */
export function registerBackend(name: string, backend: Backend | BackendFactory): void {
  if (typeof backend === 'function') factories.set(name, backend);
  else ready.set(name, backend);
}

/** Creates (once) and returns a registered backend; GPU backends need this before first use. */
export async function initBackend(name: string): Promise<Backend> {
  const existing = ready.get(name);
  if (existing) return existing;
  const factory = factories.get(name);
  if (!factory)
    throw new Error(`initBackend: no backend named '${name}' is registered (known: ${knownNames()})`);
  const backend = await factory();
  ready.set(name, backend);
  return backend;
}

export function getBackend(name: string): Backend {
  const backend = ready.get(name);
  if (backend) return backend;
  if (factories.has(name))
    throw new Error(`backend '${name}' is not initialised yet: await initBackend('${name}') first`);
  throw new Error(`unknown device '${name}' (known: ${knownNames()})`);
}

function knownNames(): string {
  return [...new Set([...ready.keys(), ...factories.keys()])].join(', ');
}

export function setDefaultDevice(name: string): void {
  getBackend(name);
  defaultDevice = name;
}

/** Whether the backend of `device` can store tensors of `dtype` (WebGPU cannot store float64). */
export function supportsDtype(device: string, dtype: DType): boolean {
  return getBackend(device).dtypes?.has(dtype) ?? true;
}

export function getDefaultDevice(): string {
  return defaultDevice;
}

/** Replaces one primitive of a backend (e.g. a SIMD matmul for the CPU); ops pick it up at once. */
export function registerKernel<K extends KernelName>(device: string, kernel: K, impl: Kernels[K]): void {
  const backend = getBackend(device);
  (backend.kernels as Kernels)[kernel] = withHalfCompute(backend, kernel, impl);
}

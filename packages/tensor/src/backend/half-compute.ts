/**
 * float16 and bfloat16 tensors on backends whose kernels compute in float32: a backend stores the half
 * dtypes itself and implements `fill` and `copy` for them (the conversions), and lists any other kernel that
 * takes half views directly in `halfKernels`. Every other kernel is wrapped here, once for all backends: its
 * half views are copied to float32 (through the backend's own `copy`), the kernel runs on those, and what it
 * writes is rounded back into the half views. That is mixed precision as PyTorch's CPU kernels do it: half
 * storage, float32 arithmetic inside a kernel (sums and matmuls accumulate in float32), one rounding per
 * stored result.
 */
import { isHalf } from '../dtype.js';
import { contiguousStrides, sizeOf } from '../shape.js';
import type { Backend, KernelName, Kernels, View } from './backend.js';

/** The views each kernel writes: argument positions, or keys of its one argument object. */
const WRITES: { [K in KernelName]?: readonly (number | string)[] } = {
  unary: [2],
  binary: [3],
  where: [3],
  reduce: [3],
  matmul: [2],
  gather: [3],
  scatterAdd: [0],
  softmax: [1],
  softmaxBackward: [2],
  logprobs: [2, 3],
  logprobsBackward: [4],
  layerNorm: ['out', 'mean', 'rstd'],
  rmsNorm: ['out', 'mean', 'rstd'],
  layerNormBackward: ['dx', 'dweight', 'dbias'],
  rmsNormBackward: ['dx', 'dweight', 'dbias'],
  attention: ['out', 'lse'],
  attentionBackward: ['dq', 'dk', 'dv'],
  rotary: ['out'],
  adamw: ['param', 'm', 'v'],
  random: [0],
};

/** Kernels every backend that stores half dtypes must implement for them itself. */
export const HALF_NATIVE_REQUIRED: readonly KernelName[] = ['fill', 'copy'];

/** `halfKernels` of a backend that stores halves and converts them, and no more (the CPU, WebGPU). */
export const HALF_STORAGE_KERNELS: ReadonlySet<KernelName> = new Set(HALF_NATIVE_REQUIRED);

const wrapped = new WeakSet<object>();

function isView(x: unknown): x is View {
  return typeof x === 'object' && x !== null && 'storage' in x && 'strides' in x;
}

/** Whether a kernel's arguments hold a half view; runs on every launch, so it allocates nothing. */
function hasHalfView(args: readonly unknown[]): boolean {
  for (const a of args) {
    if (isView(a)) {
      if (isHalf(a.dtype)) return true;
    } else if (typeof a === 'object' && a !== null && !Array.isArray(a)) {
      const fields = a as Record<string, unknown>;
      for (const key in fields) {
        const v = fields[key];
        if (isView(v) && isHalf(v.dtype)) return true;
      }
    }
  }
  return false;
}

/**
 * `impl` as the backend should run it: itself where the backend cannot store half dtypes or takes half
 * views in this kernel, else with half views computed in float32 as described above.
 */
export function withHalfCompute<K extends KernelName>(
  backend: Backend,
  name: K,
  impl: Kernels[K],
): Kernels[K] {
  const native = backend.halfKernels;
  if (!native || native.has(name) || wrapped.has(impl)) return impl;
  const writes = WRITES[name];
  if (!writes) throw new Error(`withHalfCompute: kernel '${name}' has no entry in WRITES`);
  const run = impl as (...args: unknown[]) => void;
  const wrapper = (...args: unknown[]): void => {
    if (!hasHalfView(args)) {
      run(...args);
      return;
    }
    const temps: { half: View; wide: View; written: boolean }[] = [];
    const widen = (v: unknown, written: boolean): unknown => {
      if (!isView(v) || !isHalf(v.dtype)) return v;
      const storage = backend.alloc('float32', sizeOf(v.shape));
      const wide: View = {
        storage,
        dtype: 'float32',
        shape: v.shape,
        strides: contiguousStrides(v.shape),
        offset: 0,
      };
      temps.push({ half: v, wide, written });
      backend.kernels.copy(v, wide);
      return wide;
    };
    try {
      const wideArgs = args.map((a, i) => {
        if (isView(a) || typeof a !== 'object' || a === null || Array.isArray(a))
          return widen(a, writes.includes(i));
        const object: Record<string, unknown> = {};
        for (const [key, v] of Object.entries(a)) object[key] = widen(v, writes.includes(key));
        return object;
      });
      run(...wideArgs);
      for (const t of temps) if (t.written) backend.kernels.copy(t.wide, t.half);
    } finally {
      for (const t of temps) backend.free(t.wide.storage);
    }
  };
  wrapped.add(wrapper);
  return wrapper as Kernels[K];
}

/** Wraps every kernel of `backend` that needs it; checks that fill and copy are its own. */
export function enableHalfCompute<B extends Backend>(backend: B): B {
  const native = backend.halfKernels;
  if (!native) return backend;
  for (const name of HALF_NATIVE_REQUIRED)
    if (!native.has(name))
      throw new Error(`backend '${backend.name}': halfKernels must include '${name}' to store half dtypes`);
  const kernels = backend.kernels as unknown as Record<KernelName, unknown>;
  for (const name of Object.keys(kernels) as KernelName[])
    kernels[name] = withHalfCompute(backend, name, kernels[name] as Kernels[typeof name]);
  return backend;
}

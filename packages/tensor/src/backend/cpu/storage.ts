import { type DType, type TypedArray, typedArrayFor } from '../../dtype.js';
import type { Storage, View } from '../backend.js';

export interface CpuStorage extends Storage {
  readonly data: TypedArray;
}

export function dataOf(view: View): TypedArray {
  return (view.storage as CpuStorage).data;
}

export function makeStorage(dtype: DType, data: TypedArray, backend = 'cpu'): CpuStorage {
  return { backend, dtype, size: data.length, data };
}

/**
 * Somewhere other than the JS heap for float32 arrays: the wasm kernels set one (../wasm/arena.ts) so that
 * tensors live in their memory and kernels skip the copies in and out.
 */
export interface Float32Arena {
  /** A zeroed array of `size` floats, or undefined (the JS heap then serves). */
  alloc(size: number): Float32Array | undefined;
  /** Gives back an array `alloc` returned; it must not be used afterwards. */
  free(data: Float32Array): void;
}

interface ArenaStorage extends CpuStorage {
  arena?: Float32Arena;
}

let arena: Float32Arena | undefined;

/** Sets (or, with undefined, removes) the arena that float32 storages come from from now on. */
export function setFloat32Arena(next: Float32Arena | undefined): void {
  arena = next;
}

// A storage dropped without dispose gives its array back when it is garbage-collected.
const orphans = new FinalizationRegistry<{ arena: Float32Arena; data: Float32Array }>((held) =>
  held.arena.free(held.data),
);

export function allocStorage(dtype: DType, size: number, backend: string): CpuStorage {
  const data = dtype === 'float32' && size > 0 ? arena?.alloc(size) : undefined;
  if (!data || !arena) return makeStorage(dtype, typedArrayFor(dtype, size), backend);
  const storage: ArenaStorage = { backend, dtype, size, data, arena };
  orphans.register(storage, { arena, data }, storage);
  return storage;
}

export function freeStorage(storage: Storage): void {
  const s = storage as ArenaStorage;
  if (!s.arena) return;
  orphans.unregister(s);
  s.arena.free(s.data as Float32Array);
  s.arena = undefined;
}

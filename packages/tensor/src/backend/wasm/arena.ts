/**
 * Float32 tensors of the CPU backend in the wasm memory: blocks of the runtime's heap (./heap.ts) handed to
 * the backend as Float32Arrays over that memory (../cpu/storage.ts). A kernel whose operands live there
 * passes their addresses to wasm instead of copying them in and its results out. Only where the memory is
 * shared: growing a private memory would detach every array over it. Small arrays stay on the JS heap (their
 * copies cost little, and they would crowd the heap's free list).
 *
 * A reused block is handed out as it was left, not zeroed: `Backend.alloc` promises uninitialised storage
 * (the op layer fills what a kernel accumulates into), and every kernel writes all of its output, so a
 * zeroing pass would only cost a write of every tensor. `poisonBlocks` fills every block it hands out
 * with NaN, for tests: a kernel that read an element it did not write would then turn its results NaN
 * (fresh blocks too: their zeros would hide such a read); and every block given back, so that a read
 * through an array whose storage was already freed turns NaN as well.
 */
import type { Float32Arena } from '../cpu/storage.js';
import { type WasmRuntime, getWasmRuntime } from './runtime.js';

/** Arrays below this many floats stay on the JS heap. */
export const MIN_RESIDENT = 1024;

let arena: Float32Arena | undefined;
let poison = false;

/** The arena over the runtime's heap, or undefined where the memory is not shared. */
export function wasmArena(): Float32Arena | undefined {
  const rt = getWasmRuntime();
  if (!rt.shared) return undefined;
  arena ??= makeArena(rt);
  return arena;
}

/** Whether blocks are filled with NaN as they are handed out (for tests; off by default). */
export function poisonBlocks(on: boolean): void {
  poison = on;
}

function makeArena(rt: WasmRuntime): Float32Arena {
  return {
    alloc(size: number): Float32Array | undefined {
      if (size < MIN_RESIDENT) return undefined;
      const block = rt.heap.alloc(4 * size);
      if (!block) return undefined;
      const data = new Float32Array(rt.view().buffer, block.address, size);
      if (poison) data.fill(Number.NaN);
      return data;
    },
    free(data: Float32Array): void {
      const address = rt.addressOf(data);
      if (address === undefined)
        throw new Error('wasm arena: freeing an array that is not in the wasm memory');
      if (poison) data.fill(Number.NaN);
      rt.heap.release(address, data.byteLength);
    },
  };
}

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
 * through an array whose storage was already freed turns NaN as well. Since the allocator reuses a freed
 * block at once (best fit), such a read would mostly see the next tensor's values instead: `holdBackBytes`
 * keeps freed blocks out of reuse, oldest first given back, until that many bytes are waiting. The kernels'
 * scratch block (operands copied in, packed panels) is filled with NaN too, each time a call takes it.
 */
import type { Float32Arena } from '../cpu/storage.js';
import { type WasmRuntime, getWasmRuntime, setScratchPoison } from './runtime.js';

/** Arrays below this many floats stay on the JS heap. */
export const MIN_RESIDENT = 1024;

let arena: Float32Arena | undefined;
let poison = false;
let holdBack = 0;
/** Freed blocks held back from reuse while poisoning (address, bytes), oldest first, and their bytes. */
const held: [address: number, bytes: number][] = [];
let heldBytes = 0;

/** The arena over the runtime's heap, or undefined where the memory is not shared. */
export function wasmArena(): Float32Arena | undefined {
  const rt = getWasmRuntime();
  if (!rt.shared) return undefined;
  arena ??= makeArena(rt);
  return arena;
}

export interface PoisonOptions {
  /**
   * Freed blocks wait (NaN-filled) until this many bytes of them are waiting before the oldest is reused,
   * so that a read through a freed tensor meets NaN, not a newer tensor (default 0: reused at once).
   */
  holdBackBytes?: number;
}

/**
 * Whether blocks are filled with NaN as they are handed out and given back (for tests; off by default).
 * Turning it off gives the held-back blocks to the allocator.
 */
export function poisonBlocks(on: boolean, options: PoisonOptions = {}): void {
  const bytes = options.holdBackBytes ?? 0;
  if (!(bytes >= 0)) throw new Error(`poisonWasmMemory: holdBackBytes must be ≥ 0, got ${bytes}`);
  poison = on;
  setScratchPoison(on);
  holdBack = on ? bytes : 0;
  if (held.length > 0) giveBackHeld(getWasmRuntime(), holdBack);
}

/** Gives the held-back blocks to the heap, oldest first, until at most `limit` bytes wait. */
function giveBackHeld(rt: WasmRuntime, limit: number): void {
  while (heldBytes > limit) {
    const [address, bytes] = held.shift() as [number, number];
    heldBytes -= bytes;
    rt.heap.release(address, bytes);
  }
}

function makeArena(rt: WasmRuntime): Float32Arena {
  return {
    alloc(size: number): Float32Array | undefined {
      if (size < MIN_RESIDENT) return undefined;
      let block = rt.heap.alloc(4 * size);
      if (!block && held.length > 0) {
        // The memory is full: what is held back goes to the allocator before a tensor leaves for the JS heap.
        giveBackHeld(rt, 0);
        block = rt.heap.alloc(4 * size);
      }
      if (!block) return undefined;
      const data = new Float32Array(rt.view().buffer, block.address, size);
      if (poison) data.fill(Number.NaN);
      return data;
    },
    free(data: Float32Array): void {
      const address = rt.addressOf(data);
      if (address === undefined)
        throw new Error('wasm arena: freeing an array that is not in the wasm memory');
      if (!poison) {
        rt.heap.release(address, data.byteLength);
        return;
      }
      data.fill(Number.NaN);
      held.push([address, data.byteLength]);
      heldBytes += data.byteLength;
      giveBackHeld(rt, holdBack);
    },
  };
}

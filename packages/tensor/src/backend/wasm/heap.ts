/**
 * The block allocator behind wasm-resident tensors: byte ranges of one linear memory, handed out best-fit
 * from a list of free ranges (sorted by address, neighbours merged on free) or from the top, which grows the
 * memory. Training allocates the same shapes step after step, so freed blocks are mostly reused whole and
 * the memory stops growing after the first steps. Pure bookkeeping: the caller grows the memory (`grow`)
 * and clears what it needs cleared (`fresh` says a block was never handed out before, hence still zero).
 */

/** Blocks start on this many bytes (a cache line), so SIMD loads of a tensor's rows are aligned. */
export const BLOCK_ALIGN = 64;

export interface Block {
  address: number;
  bytes: number;
  /** True when no earlier block covered these bytes: they are still the zeros of freshly grown memory. */
  fresh: boolean;
}

interface Range {
  start: number;
  bytes: number;
}

/** A block's size: at least one alignment unit, so every block has its own address. */
const roundUp = (bytes: number) => Math.ceil(Math.max(bytes, 1) / BLOCK_ALIGN) * BLOCK_ALIGN;

export class BlockHeap {
  /** Free ranges below `top`, sorted by start, never adjacent (adjacent ones are merged). */
  private free: Range[] = [];
  /** Bytes at and above `top` are unallocated; bytes at and above `highWater` were never handed out. */
  private top: number;
  private highWater: number;
  private inUse = 0;

  /**
   * Manages [base, limit). `grow(end)` must make the memory at least `end` bytes long and return false
   * when it cannot (the allocation then fails and returns undefined).
   */
  constructor(
    base: number,
    private readonly limit: number,
    private readonly grow: (end: number) => boolean,
  ) {
    this.top = Math.ceil(base / BLOCK_ALIGN) * BLOCK_ALIGN;
    this.highWater = this.top;
  }

  alloc(bytes: number): Block | undefined {
    const size = roundUp(bytes);
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const r = this.free[i];
      if (r.bytes >= size && (best < 0 || r.bytes < this.free[best].bytes)) {
        best = i;
        if (r.bytes === size) break;
      }
    }
    if (best >= 0) {
      const r = this.free[best];
      const address = r.start;
      if (r.bytes === size) this.free.splice(best, 1);
      else {
        r.start += size;
        r.bytes -= size;
      }
      this.inUse += size;
      return { address, bytes: size, fresh: false };
    }
    // From the top (no free range ends at the top: release gives such a range back to it).
    const start = this.top;
    const end = start + size;
    if (end > this.limit || !this.grow(end)) return undefined;
    const fresh = start >= this.highWater;
    this.top = end;
    this.highWater = Math.max(this.highWater, end);
    this.inUse += size;
    return { address: start, bytes: size, fresh };
  }

  /** Returns a block from `alloc` (its address and its byte count, as alloc rounded it or as asked). */
  release(address: number, bytes: number): void {
    const size = roundUp(bytes);
    if (address + size > this.top)
      throw new Error(`wasm heap: block at ${address} (${size} bytes) is not in use`);
    // The first free range after the block, by binary search.
    let lo = 0;
    let hi = this.free.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.free[mid].start < address) lo = mid + 1;
      else hi = mid;
    }
    const before = this.free[lo - 1];
    const after = this.free[lo];
    if ((before && before.start + before.bytes > address) || (after && address + size > after.start))
      throw new Error(`wasm heap: block at ${address} (${size} bytes) is already free`);
    this.inUse -= size;
    let range: Range;
    if (before && before.start + before.bytes === address) {
      before.bytes += size;
      range = before;
      lo--;
    } else {
      range = { start: address, bytes: size };
      this.free.splice(lo, 0, range);
    }
    const next = this.free[lo + 1];
    if (next && range.start + range.bytes === next.start) {
      range.bytes += next.bytes;
      this.free.splice(lo + 1, 1);
    }
    // A range that reaches the top gives its bytes back to the top.
    if (range.start + range.bytes === this.top) {
      this.top = range.start;
      this.free.pop();
    }
  }

  /** Bytes handed out and not yet released, the top of the used region, and the number of free ranges. */
  stats(): { inUse: number; top: number; freeRanges: number } {
    return { inUse: this.inUse, top: this.top, freeRanges: this.free.length };
  }
}

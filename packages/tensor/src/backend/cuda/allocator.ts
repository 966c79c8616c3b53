/**
 * A caching allocator over cuMemAlloc/cuMemFree. Requests round up to a size class (powers of two from
 * 512 B to 1 MiB, then multiples of 2 MiB); freed blocks go back to their class's free list instead of to
 * the driver, because cuMemFree synchronises the device and cuMemAlloc is slow. Frees are stream-ordered
 * for free: the backend queues every kernel and copy on one stream, so work queued after a block is reused
 * runs after all work queued before it was freed. When the driver is out of memory, the pool is returned
 * to it (after the stream drains) and the allocation retried once.
 */
export interface DeviceMemory {
  alloc(bytes: number): bigint;
  free(ptr: bigint): void;
  /** Waits for queued work, so cached blocks can be handed back to the driver. */
  drain(): void;
  isOutOfMemory(error: unknown): boolean;
}

export interface Block {
  readonly ptr: bigint;
  /** The size class: bytes actually reserved. */
  readonly bytes: number;
}

export interface AllocatorStats {
  liveBlocks: number;
  liveBytes: number;
  pooledBlocks: number;
  pooledBytes: number;
  /** Bytes held from the driver (live + pooled) now and at the peak. */
  reservedBytes: number;
  peakReservedBytes: number;
}

const MIN_CLASS = 512;
const SMALL_LIMIT = 1 << 20;
const LARGE_STEP = 2 << 20;

export function sizeClass(bytes: number): number {
  if (bytes <= 0) return 0;
  if (bytes <= SMALL_LIMIT) return Math.max(MIN_CLASS, 2 ** Math.ceil(Math.log2(bytes)));
  return Math.ceil(bytes / LARGE_STEP) * LARGE_STEP;
}

export class CachingAllocator {
  private readonly pool = new Map<number, bigint[]>();
  private readonly s: AllocatorStats = {
    liveBlocks: 0,
    liveBytes: 0,
    pooledBlocks: 0,
    pooledBytes: 0,
    reservedBytes: 0,
    peakReservedBytes: 0,
  };

  constructor(private readonly memory: DeviceMemory) {}

  alloc(bytes: number): Block {
    const size = sizeClass(bytes);
    if (size === 0) return { ptr: 0n, bytes: 0 };
    const cached = this.pool.get(size)?.pop();
    let ptr: bigint;
    if (cached !== undefined) {
      ptr = cached;
      this.s.pooledBlocks--;
      this.s.pooledBytes -= size;
    } else {
      ptr = this.fresh(size);
      this.s.reservedBytes += size;
      this.s.peakReservedBytes = Math.max(this.s.peakReservedBytes, this.s.reservedBytes);
    }
    this.s.liveBlocks++;
    this.s.liveBytes += size;
    return { ptr, bytes: size };
  }

  free(block: Block): void {
    if (block.bytes === 0) return;
    let list = this.pool.get(block.bytes);
    if (!list) {
      list = [];
      this.pool.set(block.bytes, list);
    }
    list.push(block.ptr);
    this.s.liveBlocks--;
    this.s.liveBytes -= block.bytes;
    this.s.pooledBlocks++;
    this.s.pooledBytes += block.bytes;
  }

  /** Hands every cached block back to the driver (after queued work that may still use them). */
  releaseCached(): void {
    if (this.s.pooledBlocks === 0) return;
    this.memory.drain();
    for (const list of this.pool.values()) for (const ptr of list) this.memory.free(ptr);
    this.s.reservedBytes -= this.s.pooledBytes;
    this.pool.clear();
    this.s.pooledBlocks = 0;
    this.s.pooledBytes = 0;
  }

  stats(): AllocatorStats {
    return { ...this.s };
  }

  private fresh(size: number): bigint {
    try {
      return this.memory.alloc(size);
    } catch (e) {
      if (!this.memory.isOutOfMemory(e) || this.s.pooledBlocks === 0) throw e;
      this.releaseCached();
      return this.memory.alloc(size);
    }
  }
}

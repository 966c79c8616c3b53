/**
 * Keys and values of every layer for a batch of sequences that grow independently: row b holds
 * `lengths[b]` valid positions. Prefill, decoding and appending a tool observation are all one operation,
 * `TransformerLM.extend`, which writes the new positions of each row and advances its length.
 */
import { type Tensor, keep, zeros } from '@agent-r1/tensor';

export interface KVCacheShape {
  layers: number;
  batch: number;
  kvHeads: number;
  headDim: number;
  /** Positions each row can hold. */
  capacity: number;
  dtype?: 'float32' | 'float64';
  device?: string;
}

export class KVCache {
  readonly keys: Tensor[];
  readonly values: Tensor[];
  readonly lengths: number[];
  readonly capacity: number;

  constructor(readonly shape: KVCacheShape) {
    const dims = [shape.batch, shape.kvHeads, shape.capacity, shape.headDim];
    const options = { dtype: shape.dtype ?? 'float32', device: shape.device };
    this.keys = Array.from({ length: shape.layers }, () => keep(zeros(dims, options)));
    this.values = Array.from({ length: shape.layers }, () => keep(zeros(dims, options)));
    this.lengths = new Array<number>(shape.batch).fill(0);
    this.capacity = shape.capacity;
  }

  get batch(): number {
    return this.shape.batch;
  }

  /** Throws before any write if some row would overflow. */
  checkRoom(added: readonly number[]): void {
    added.forEach((n, b) => {
      if (this.lengths[b] + n > this.capacity) {
        throw new Error(
          `KVCache: row ${b} would hold ${this.lengths[b] + n} positions, more than its capacity ${this.capacity}`,
        );
      }
    });
  }

  /** Writes k/v [B, Hkv, T, D] of one layer: row b's first added[b] positions go after its current length. */
  write(layer: number, k: Tensor, v: Tensor, added: readonly number[]): void {
    for (let b = 0; b < added.length; b++) {
      const n = added[b];
      if (n === 0) continue;
      for (const [cache, src] of [
        [this.keys[layer], k],
        [this.values[layer], v],
      ] as const) {
        const rowSrc = src.select(0, b);
        const part = rowSrc.narrow(1, 0, n);
        const rowDst = cache.select(0, b);
        const dst = rowDst.narrow(1, this.lengths[b], n);
        dst.copy_(part);
        for (const t of [rowSrc, part, rowDst, dst]) t.dispose();
      }
    }
  }

  /** Advances each row's length once every layer has been written. */
  advance(added: readonly number[]): void {
    added.forEach((n, b) => {
      this.lengths[b] += n;
    });
  }

  /** Forgets everything (lengths to 0); the buffers are reused. */
  reset(): void {
    this.lengths.fill(0);
  }

  dispose(): void {
    for (const t of [...this.keys, ...this.values]) t.dispose();
  }
}

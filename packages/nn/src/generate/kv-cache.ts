/**
 * Keys and values of every layer for a batch of sequences that grow independently: row b holds
 * `lengths[b]` valid positions. Prefill, decoding and appending a tool observation are all one operation,
 * `TransformerLM.extend`, which writes the new positions of each row and advances its length.
 */
import { type Tensor, keep, zeros, type FloatDType } from '@agent-r1/tensor';

export interface KVCacheShape {
  layers: number;
  batch: number;
  kvHeads: number;
  headDim: number;
  /** Positions each row can hold. */
  capacity: number;
  dtype?: FloatDType;
  device?: string;
  /** For a model with a copy head: the width of its keys, kept with each position's token id. */
  copyDim?: number;
  /** For a copy head with a source gate: keep each position's source too. */
  copySources?: boolean;
}

export class KVCache {
  readonly keys: Tensor[];
  readonly values: Tensor[];
  /**
   * The copy head's keys [B, capacity + 1, copyDim] (slot j: the key of position j, written with position
   * j − 1; slot 0 stays zero) and, on the host, the token ids they stand for (row b: capacity ids).
   */
  readonly copyKeys: Tensor | null;
  /** The copy head's sources [B, capacity, 1] (slot j: position j's), with `copySources`. */
  readonly copySources: Tensor | null;
  readonly tokenIds: Int32Array[] | null;
  readonly lengths: number[];
  readonly capacity: number;

  constructor(readonly shape: KVCacheShape) {
    const dims = [shape.batch, shape.kvHeads, shape.capacity, shape.headDim];
    const options = { dtype: shape.dtype ?? 'float32', device: shape.device };
    this.keys = Array.from({ length: shape.layers }, () => keep(zeros(dims, options)));
    this.values = Array.from({ length: shape.layers }, () => keep(zeros(dims, options)));
    const copy = shape.copyDim !== undefined;
    this.copyKeys = copy ? keep(zeros([shape.batch, shape.capacity + 1, shape.copyDim!], options)) : null;
    this.copySources =
      copy && shape.copySources ? keep(zeros([shape.batch, shape.capacity, 1], options)) : null;
    this.tokenIds = copy ? Array.from({ length: shape.batch }, () => new Int32Array(shape.capacity)) : null;
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
    this.writeRows(this.keys[layer], k, 1, added);
    this.writeRows(this.values[layer], v, 1, added);
  }

  /**
   * Writes the copy head's next keys [B, T, copyDim] (row t: the key of the position after t) one slot
   * ahead, its sources [B, T, 1] (with `copySources`) and the token ids (row b: at least added[b] of
   * them), like `write`.
   */
  writeCopy(
    nextKeys: Tensor,
    ids: readonly ArrayLike<number>[],
    added: readonly number[],
    sources?: Tensor,
  ): void {
    if (!this.copyKeys || !this.tokenIds) throw new Error('KVCache: this cache was made without copyDim');
    if (Boolean(this.copySources) !== Boolean(sources))
      throw new Error('KVCache.writeCopy: sources must be given exactly when the cache keeps copySources');
    this.writeRows(this.copyKeys, nextKeys, 0, added, 1);
    if (this.copySources && sources) this.writeRows(this.copySources, sources, 0, added);
    added.forEach((n, b) => {
      for (let i = 0; i < n; i++) this.tokenIds![b][this.lengths[b] + i] = ids[b][i];
    });
  }

  /**
   * Row b of src's first added[b] positions (along `axis` of a row) into dst after the row's length. Runs of
   * consecutive rows with the same length and count go in one copy (a batch decoding in step: one per call).
   */
  private writeRows(dst: Tensor, src: Tensor, axis: number, added: readonly number[], ahead = 0): void {
    for (let b = 0; b < added.length; ) {
      const n = added[b];
      let end = b + 1;
      while (end < added.length && added[end] === n && this.lengths[end] === this.lengths[b]) end++;
      if (n > 0) {
        const rowsSrc = src.narrow(0, b, end - b);
        const part = rowsSrc.narrow(axis + 1, 0, n);
        const rowsDst = dst.narrow(0, b, end - b);
        const target = rowsDst.narrow(axis + 1, this.lengths[b] + ahead, n);
        target.copy_(part);
        for (const t of [rowsSrc, part, rowsDst, target]) t.dispose();
      }
      b = end;
    }
  }

  /**
   * A new cache holding copies of the given rows, in that order (their keys, values, copy keys, token ids
   * and lengths): a pass over a few rows need not pad or compute every row of a large batch.
   */
  gather(rows: readonly number[]): KVCache {
    for (const r of rows) {
      if (!Number.isInteger(r) || r < 0 || r >= this.batch)
        throw new Error(`KVCache.gather: row ${r} is not one of 0..${this.batch - 1}`);
    }
    const sub = new KVCache({ ...this.shape, batch: rows.length });
    for (const [i, r] of rows.entries()) copyRow(this, r, sub, i);
    return sub;
  }

  /** Writes every row of `sub` (made by `gather(rows)` and extended since) back to row rows[i]. */
  scatter(sub: KVCache, rows: readonly number[]): void {
    if (rows.length !== sub.batch)
      throw new Error(`KVCache.scatter: ${rows.length} rows for a cache of ${sub.batch}`);
    for (const [i, r] of rows.entries()) copyRow(sub, i, this, r);
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
    this.copyKeys?.dispose();
    this.copySources?.dispose();
  }
}

/** Row `from` of `src` (every tensor, the token ids and the length) over row `to` of `dst`. */
function copyRow(src: KVCache, from: number, dst: KVCache, to: number): void {
  const tensors: [Tensor, Tensor][] = [
    ...src.keys.map((k, l): [Tensor, Tensor] => [k, dst.keys[l]]),
    ...src.values.map((v, l): [Tensor, Tensor] => [v, dst.values[l]]),
  ];
  if (src.copyKeys && dst.copyKeys) tensors.push([src.copyKeys, dst.copyKeys]);
  if (src.copySources && dst.copySources) tensors.push([src.copySources, dst.copySources]);
  for (const [s, d] of tensors) {
    const rowSrc = s.select(0, from);
    const rowDst = d.select(0, to);
    rowDst.copy_(rowSrc);
    rowSrc.dispose();
    rowDst.dispose();
  }
  if (src.tokenIds && dst.tokenIds) dst.tokenIds[to].set(src.tokenIds[from]);
  dst.lengths[to] = src.lengths[from];
}

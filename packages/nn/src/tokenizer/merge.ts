/**
 * Applying learned merges to one pre-token. Merge r joins the pair merges[r] into token id results[r]
 * (256 + r for our own tokenizers, whose ids follow the merges; a Hugging Face vocabulary gives its own ids),
 * and a lower r was learned earlier and has priority: BPE repeatedly merges the leftmost occurrence of the
 * lowest-ranked pair present. Short words use a rank-min scan over a cached array of pair ranks; long ones
 * (a 1 MB run of letters is a single pre-token) a heap over a linked list, so the cost stays O(n log n).
 */
import { BYTE_VOCAB } from './bytes.js';

/** Words up to this many bytes use the scan; longer ones the heap. */
const SCAN_MAX = 64;

const NONE = Number.POSITIVE_INFINITY;

export class MergeTable {
  /** Pair key (left * base + right) → the merge's rank. */
  private readonly pairs = new Map<number, number>();
  /** The token id each merge makes, by rank. */
  private readonly results: Int32Array;
  /** Any number above every id a merge can take as input. */
  private readonly base: number;

  /**
   * `results[r]` is the id merge r makes (default 256 + r). A pair listed twice takes its last rank, as
   * Hugging Face's tokenizers do.
   */
  constructor(
    readonly merges: ReadonlyArray<readonly [number, number]>,
    results?: ArrayLike<number>,
  ) {
    this.results = results
      ? Int32Array.from(results)
      : Int32Array.from({ length: merges.length }, (_, r) => BYTE_VOCAB + r);
    let base = BYTE_VOCAB + merges.length;
    for (const [a, b] of merges) base = Math.max(base, a + 1, b + 1);
    for (const id of this.results) base = Math.max(base, id + 1);
    this.base = base;
    for (let r = 0; r < merges.length; r++) {
      const [a, b] = merges[r];
      this.pairs.set(a * base + b, r);
    }
  }

  /** The token id that pair (a, b) merges into, or undefined. */
  merged(a: number, b: number): number | undefined {
    const r = this.pairs.get(a * this.base + b);
    return r === undefined ? undefined : this.results[r];
  }

  /** Merges `ids` (byte ids of one pre-token) in place as far as the merges allow; returns the result. */
  apply(ids: number[]): number[] {
    if (ids.length < 2) return ids;
    return ids.length <= SCAN_MAX ? this.applyScan(ids) : this.applyHeap(ids);
  }

  /** Rank-min scan: `rank[i]` caches the rank of pair (ids[i], ids[i+1]), NONE if there is none. */
  applyScan(ids: number[]): number[] {
    const { pairs, base, results } = this;
    const rank: number[] = [];
    for (let i = 0; i + 1 < ids.length; i++) rank.push(pairs.get(ids[i] * base + ids[i + 1]) ?? NONE);
    for (;;) {
      let best = NONE;
      let at = -1;
      for (let i = 0; i < rank.length; i++) {
        if (rank[i] < best) {
          best = rank[i];
          at = i;
        }
      }
      if (at < 0) return ids;
      const id = results[best];
      ids[at] = id;
      ids.splice(at + 1, 1);
      rank.splice(at, 1);
      if (at > 0) rank[at - 1] = pairs.get(ids[at - 1] * base + id) ?? NONE;
      if (at < rank.length) rank[at] = pairs.get(id * base + ids[at + 1]) ?? NONE;
    }
  }

  /**
   * Heap version: nodes in a doubly linked list, candidate merges in a min-heap keyed by
   * (rank, position), so the lowest rank wins and ties go to the leftmost. Entries whose pair has since
   * changed are skipped when popped.
   */
  applyHeap(ids: number[]): number[] {
    const { pairs, base, results } = this;
    const n = ids.length;
    const val = Int32Array.from(ids);
    const next = new Int32Array(n);
    const prev = new Int32Array(n);
    const alive = new Uint8Array(n).fill(1);
    for (let i = 0; i < n; i++) {
      next[i] = i + 1 < n ? i + 1 : -1;
      prev[i] = i - 1;
    }
    const heap = new MinHeap();
    for (let i = 0; i + 1 < n; i++) {
      const m = pairs.get(val[i] * base + val[i + 1]);
      if (m !== undefined) heap.push(m * n + i);
    }
    while (heap.size > 0) {
      const e = heap.pop();
      const m = Math.floor(e / n);
      const i = e - m * n;
      const j = next[i];
      if (alive[i] === 0 || j < 0 || pairs.get(val[i] * base + val[j]) !== m) continue;
      const id = results[m];
      val[i] = id;
      alive[j] = 0;
      const k = next[j];
      next[i] = k;
      if (k >= 0) prev[k] = i;
      const p = prev[i];
      if (p >= 0) {
        const mp = pairs.get(val[p] * base + id);
        if (mp !== undefined) heap.push(mp * n + p);
      }
      if (k >= 0) {
        const mk = pairs.get(id * base + val[k]);
        if (mk !== undefined) heap.push(mk * n + i);
      }
    }
    const out: number[] = [];
    for (let i = 0; i >= 0; i = next[i]) out.push(val[i]);
    return out;
  }
}

/** A binary min-heap of numbers. */
class MinHeap {
  private readonly a: number[] = [];

  get size(): number {
    return this.a.length;
  }

  push(x: number): void {
    const a = this.a;
    let i = a.length;
    a.push(x);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p] <= x) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = x;
  }

  pop(): number {
    const a = this.a;
    const top = a[0];
    const last = a.pop()!;
    const n = a.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && a[r] < a[l] ? r : l;
        if (a[c] >= last) break;
        a[i] = a[c];
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

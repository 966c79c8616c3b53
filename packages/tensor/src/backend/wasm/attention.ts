/**
 * Attention forward on the wasm kernel (./emit/attention.ts) for float32, causal or not, grouped-query heads
 * included, without a mask or with a keep-mask whose every row is a prefix (keys 0..n−1 kept, the rest
 * dropped: what a KV cache's padded batch needs); other masks take the TypeScript kernel. A prefix mask
 * travels as one int32 key count per (batch, head, query) row. The forward reads q, k, v and writes its
 * outputs in place when they live in the wasm memory (./arena.ts), and copies them through the scratch block
 * otherwise, K and V head by head where their heads are not contiguous (the backward always copies); the
 * work is a list of calls over (batch, head, block of query rows), split over the threads.
 * Each query row is computed by one call start to end, so results do not depend on the thread count. Scores
 * and sums are float32 (the CPU kernel uses float64). The backward runs one call per (batch, kv head): that
 * call owns the kv head's dk and dv, so they are summed in one fixed order whatever the thread count.
 */
import {
  type AttentionArgs,
  type AttentionBackwardArgs,
  type AttentionDims,
  type View,
  assertHeadsDense,
  attentionDims,
  headStart,
} from '../backend.js';
import { attentionBackward as cpuAttentionBackward, attention as cpuAttention } from '../cpu/attention.js';
import { dataOf } from '../cpu/storage.js';
import { assertDense, elementOffsets, isDense } from '../cpu/strided.js';
import type { Call } from './pool.js';
import { getWasmRuntime } from './runtime.js';

const f32 = (v: View) => dataOf(v) as Float32Array;
const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

/**
 * For a bool keep-mask broadcast to [B, H, T, S]: the number of keys each (b, h, i) row keeps when every row
 * keeps a prefix (1…1 0…0), else null. Rows that share their mask row (a broadcast head axis) are read once.
 */
export function prefixKeyLimits(mask: View): Int32Array | null {
  const [, , , S] = mask.shape;
  const data = dataOf(mask);
  const rows = elementOffsets(mask.shape.slice(0, 3), mask.strides.slice(0, 3), mask.offset);
  const stride = mask.strides[3];
  const limits = new Int32Array(rows.length);
  let lastRow = -1;
  let lastLimit = 0;
  for (let r = 0; r < rows.length; r++) {
    const at = rows[r];
    if (at !== lastRow) {
      let n = 0;
      if (stride === 1) {
        // A contiguous row (a KV cache's mask, read at every layer of every decode step): the engine's
        // indexOf finds the first dropped key and any kept one after it (bools are stored as 0 or 1).
        const row = data.subarray(at, at + S);
        n = row.indexOf(0);
        if (n < 0) n = S;
        else if (row.indexOf(1, n + 1) >= 0) return null;
      } else {
        while (n < S && data[at + n * stride]) n++;
        for (let j = n + 1; j < S; j++) if (data[at + j * stride]) return null;
      }
      lastRow = at;
      lastLimit = n;
    }
    limits[r] = lastLimit;
  }
  return limits;
}

/**
 * The [S, D] rows of every (batch, K/V head) of `view` (heads of dense rows, as a KV cache's buffer cut to
 * its S keys has them), packed densely into `mem` from element `at`. A K or V outside the wasm memory that
 * is not dense goes through here rather than to the TypeScript kernel, whose float64 scores would give
 * other bits: where a tensor lives must not change a result (a KV cache lives on the JS heap where the
 * memory is not shared, as in a page without cross-origin isolation, or when it is full).
 */
function copyHeads(
  view: View,
  mem: Float32Array,
  at: number,
  { B, Hkv, S, D }: Omit<AttentionDims, 'H' | 'T'>,
) {
  const data = f32(view);
  for (let b = 0; b < B; b++)
    for (let hk = 0; hk < Hkv; hk++) {
      const from = headStart(view, b, hk);
      mem.set(data.subarray(from, from + S * D), at + (b * Hkv + hk) * S * D);
    }
}

export function attention(args: AttentionArgs): void {
  const { q, k, v, mask, causal, scale, out, lse } = args;
  const limits = mask && mask.dtype === 'bool' ? prefixKeyLimits(mask) : null;
  if ((mask && !limits) || [q, k, v, out, lse].some((x) => x.dtype !== 'float32')) {
    cpuAttention(args);
    return;
  }
  assertDense('attention', q);
  assertHeadsDense('cpu attention', k, v);
  const { B, H, Hkv, T, S, D } = attentionDims(args);
  if (B * H * T === 0) return;
  const rt = getWasmRuntime();
  if (D === 0 || S === 0) {
    cpuAttention(args);
    return;
  }
  const qn = B * H * T * D;
  const kn = B * Hkv * S * D;
  const lanes = rt.lanes(4 * B * H * T * S * D);
  const pieces = Math.min(T, Math.max(1, Math.ceil((2 * lanes) / (B * H))));
  const rowsPer = Math.ceil(T / pieces);
  const callsPerHead = Math.ceil(T / rowsPer);
  // Operands in the wasm memory are used in place; the others get a region of the scratch block.
  const operands = [
    { view: q, n: qn },
    { view: k, n: kn },
    { view: v, n: kn },
    { view: out, n: qn },
    { view: lse, n: B * H * T },
  ].map(({ view, n }) => ({ view, n, address: rt.addressOf(f32(view)) }));
  let top = 0;
  const regions = operands.map(({ n, address }) => {
    if (address !== undefined) return -1;
    const at = top;
    top = align16(top + 4 * n);
    return at;
  });
  const mAt = top;
  const sAt = align16(mAt + (limits ? 4 * B * H * T : 0));
  const { base, mem } = rt.scratch(sAt + 4 * S * B * H * callsPerHead);
  const [qAt, , , oAt, lAt] = operands.map(({ view, n, address }, i) => {
    if (address !== undefined) return address + 4 * view.offset;
    if (i === 0 || (i < 3 && isDense(view)))
      mem.set(f32(view).subarray(view.offset, view.offset + n), (base + regions[i]) / 4);
    else if (i < 3) copyHeads(view, mem, (base + regions[i]) / 4, { B, Hkv, S, D });
    return base + regions[i];
  });
  /** Where the rows of (batch b, K/V head hk) of operand 1 (k) or 2 (v) are: in place, or in the copy. */
  const headAt = (i: 1 | 2, b: number, hk: number) => {
    const { view, address } = operands[i];
    if (address !== undefined) return address + 4 * headStart(view, b, hk);
    return base + regions[i] + 4 * (b * Hkv + hk) * S * D;
  };
  if (limits) new Int32Array(mem.buffer, base + mAt, limits.length).set(limits);
  const id = rt.id('attn_fwd');
  const shift = causal ? S - T : S;
  const calls: Call[] = [];
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) {
      const bh = b * H + h;
      const hk = Math.floor(h / (H / Hkv));
      for (let i0 = 0; i0 < T; i0 += rowsPer) {
        const scratch = base + sAt + 4 * S * calls.length;
        const qp = qAt + 4 * bh * T * D;
        const op = oAt + 4 * bh * T * D;
        const i1 = Math.min(T, i0 + rowsPer);
        calls.push([
          id,
          qp,
          headAt(1, b, hk),
          headAt(2, b, hk),
          op,
          lAt + 4 * bh * T,
          scratch,
          S,
          D,
          i0,
          i1,
          shift,
          limits ? base + mAt + 4 * bh * T : -1,
          scale,
        ]);
      }
    }
  rt.parallel('attention', calls, lanes);
  const view = rt.view();
  for (const i of [3, 4]) {
    const { view: o, n, address } = operands[i];
    const at = [oAt, lAt][i - 3] / 4;
    if (address === undefined) f32(o).set(view.subarray(at, at + n), o.offset);
  }
}

export function attentionBackward(args: AttentionBackwardArgs): void {
  const { q, k, v, mask, causal, scale, out, lse, dout, dq, dk, dv } = args;
  const all = [q, k, v, out, lse, dout, dq, dk, dv];
  const limits = mask && mask.dtype === 'bool' ? prefixKeyLimits(mask) : null;
  if ((mask && !limits) || all.some((x) => x.dtype !== 'float32')) {
    cpuAttentionBackward(args);
    return;
  }
  assertDense('attentionBackward', q, k, v, out, dout);
  const { B, H, Hkv, T, S, D } = attentionDims(args);
  if (B * H * T * S * D === 0) {
    cpuAttentionBackward(args);
    return;
  }
  const G = H / Hkv;
  const qn = B * H * T * D;
  const kn = B * Hkv * S * D;
  const rt = getWasmRuntime();
  const lanes = rt.lanes(8 * B * H * T * S * D);
  const qs = align16(4 * qn);
  const ks = align16(4 * kn);
  const { base, mem } = rt.scratch(4 * qs + 4 * ks + align16(4 * B * H * T) + (limits ? 4 * B * H * T : 0));
  const qAt = base;
  const kAt = qAt + 4 * qs;
  const lAt = kAt + 4 * ks;
  const mAt = align16(lAt + 4 * B * H * T);
  if (limits) new Int32Array(mem.buffer, mAt, limits.length).set(limits);
  mem.set(f32(q).subarray(q.offset, q.offset + qn), qAt / 4);
  mem.set(f32(out).subarray(out.offset, out.offset + qn), (qAt + qs) / 4);
  mem.set(f32(dout).subarray(dout.offset, dout.offset + qn), (qAt + 2 * qs) / 4);
  mem.set(f32(k).subarray(k.offset, k.offset + kn), kAt / 4);
  mem.set(f32(v).subarray(v.offset, v.offset + kn), (kAt + ks) / 4);
  mem.fill(0, (kAt + 2 * ks) / 4, (kAt + 4 * ks) / 4);
  mem.set(f32(lse).subarray(lse.offset, lse.offset + B * H * T), lAt / 4);
  const id = rt.id('attn_bwd');
  const shift = causal ? S - T : S;
  const calls: Call[] = [];
  for (let b = 0; b < B; b++)
    for (let h = 0; h < Hkv; h++) {
      const head = b * H + h * G;
      calls.push([
        id,
        qAt + 4 * head * T * D,
        qs,
        kAt + 4 * (b * Hkv + h) * S * D,
        ks,
        lAt + 4 * head * T,
        G * T,
        T,
        S,
        D,
        shift,
        limits ? mAt + 4 * head * T : -1,
        scale,
      ]);
    }
  rt.parallel('attentionBackward', calls, lanes);
  const view = rt.view();
  f32(dq).set(view.subarray((qAt + 3 * qs) / 4, (qAt + 3 * qs) / 4 + qn), dq.offset);
  f32(dk).set(view.subarray((kAt + 2 * ks) / 4, (kAt + 2 * ks) / 4 + kn), dk.offset);
  f32(dv).set(view.subarray((kAt + 3 * ks) / 4, (kAt + 3 * ks) / 4 + kn), dv.offset);
}

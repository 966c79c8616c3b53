import type { AttentionArgs, AttentionBackwardArgs, View } from '../backend.js';
import { dataOf } from './storage.js';
import { assertDense, elementOffsets } from './strided.js';

interface Layout {
  B: number;
  H: number;
  Hkv: number;
  T: number;
  S: number;
  D: number;
  /** Offsets of mask[b, h, i, 0] for each (b, h, i) row, and the mask's stride along keys. */
  maskRows: Int32Array | null;
  maskStride: number;
}

function layout(args: AttentionArgs | AttentionBackwardArgs): Layout {
  const [B, H, T, D] = args.q.shape;
  const Hkv = args.k.shape[1];
  const S = args.k.shape[2];
  const m = args.mask;
  return {
    B,
    H,
    Hkv,
    T,
    S,
    D,
    maskRows: m ? elementOffsets(m.shape.slice(0, 3), m.strides.slice(0, 3), m.offset) : null,
    maskStride: m ? m.strides[3] : 0,
  };
}

/**
 * Fills `p` with the probabilities of one query row and returns the row's log-sum-exp (-Infinity when every
 * key is masked; then p is all zeros). Scores are computed in float64.
 */
function scoreRow(
  args: AttentionArgs | AttentionBackwardArgs,
  L: Layout,
  row: number,
  qOff: number,
  kBase: number,
  p: Float64Array,
): number {
  const q = dataOf(args.q);
  const k = dataOf(args.k);
  const mask = args.mask && dataOf(args.mask);
  const i = row % L.T;
  const limit = args.causal ? Math.min(L.S, i + (L.S - L.T) + 1) : L.S;
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < L.S; j++) {
    const allowed = j < limit && (!mask || mask[L.maskRows![row] + j * L.maskStride]);
    if (!allowed) {
      p[j] = Number.NEGATIVE_INFINITY;
      continue;
    }
    let s = 0;
    const kOff = kBase + j * L.D;
    for (let d = 0; d < L.D; d++) s += q[qOff + d] * k[kOff + d];
    p[j] = s * args.scale;
    if (p[j] > max) max = p[j];
  }
  if (max === Number.NEGATIVE_INFINITY) {
    p.fill(0);
    return max;
  }
  let sum = 0;
  for (let j = 0; j < L.S; j++) sum += Math.exp(p[j] - max);
  const lse = max + Math.log(sum);
  for (let j = 0; j < L.S; j++) p[j] = Math.exp(p[j] - lse);
  return lse;
}

/** Offset of the K/V head that query head h reads (grouped-query attention). */
function kvBase(L: Layout, row: number, kv: View): number {
  const bh = Math.floor(row / L.T);
  const b = Math.floor(bh / L.H);
  const h = bh % L.H;
  const hk = Math.floor(h / (L.H / L.Hkv));
  return kv.offset + (b * L.Hkv + hk) * L.S * L.D;
}

export function attention(args: AttentionArgs): void {
  assertDense('attention', args.q, args.k, args.v);
  const L = layout(args);
  const v = dataOf(args.v);
  const o = dataOf(args.out);
  const lse = dataOf(args.lse);
  const p = new Float64Array(L.S);
  const acc = new Float64Array(L.D);
  for (let row = 0; row < L.B * L.H * L.T; row++) {
    const qOff = args.q.offset + row * L.D;
    lse[row] = scoreRow(args, L, row, qOff, kvBase(L, row, args.k), p);
    const vBase = kvBase(L, row, args.v);
    acc.fill(0);
    for (let j = 0; j < L.S; j++) {
      if (p[j] === 0) continue;
      const vOff = vBase + j * L.D;
      for (let d = 0; d < L.D; d++) acc[d] += p[j] * v[vOff + d];
    }
    for (let d = 0; d < L.D; d++) o[row * L.D + d] = acc[d];
  }
}

/**
 * Recomputes each probability row P, then with dP = dO·Vᵀ and delta = rowsum(dO ∘ O):
 * dS = P ∘ (dP − delta), dQ = scale·dS·K, dK += scale·dSᵀ·Q, dV += Pᵀ·dO.
 */
export function attentionBackward(args: AttentionBackwardArgs): void {
  assertDense('attentionBackward', args.q, args.k, args.v, args.out, args.dout);
  const L = layout(args);
  const q = dataOf(args.q);
  const k = dataOf(args.k);
  const v = dataOf(args.v);
  const out = dataOf(args.out);
  const dout = dataOf(args.dout);
  const dq = dataOf(args.dq);
  const dk = dataOf(args.dk);
  const dv = dataOf(args.dv);
  dk.fill(0);
  dv.fill(0);
  const p = new Float64Array(L.S);
  for (let row = 0; row < L.B * L.H * L.T; row++) {
    const qOff = args.q.offset + row * L.D;
    const gOff = args.dout.offset + row * L.D;
    const oOff = args.out.offset + row * L.D;
    const kBase = kvBase(L, row, args.k);
    const vBase = kvBase(L, row, args.v);
    scoreRow(args, L, row, qOff, kBase, p);
    let delta = 0;
    for (let d = 0; d < L.D; d++) delta += dout[gOff + d] * out[oOff + d];
    for (let d = 0; d < L.D; d++) dq[row * L.D + d] = 0;
    // Gradient buffers are dense, starting at 0: their K/V head offset is the input's minus its offset.
    const dkBase = kBase - args.k.offset;
    const dvBase = vBase - args.v.offset;
    for (let j = 0; j < L.S; j++) {
      if (p[j] === 0) continue;
      const kOff = kBase + j * L.D;
      const vOff = vBase + j * L.D;
      let dp = 0;
      for (let d = 0; d < L.D; d++) {
        dp += dout[gOff + d] * v[vOff + d];
        dv[dvBase + j * L.D + d] += p[j] * dout[gOff + d];
      }
      const ds = p[j] * (dp - delta) * args.scale;
      for (let d = 0; d < L.D; d++) {
        dq[row * L.D + d] += ds * k[kOff + d];
        dk[dkBase + j * L.D + d] += ds * q[qOff + d];
      }
    }
  }
}

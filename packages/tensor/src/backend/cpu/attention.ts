/**
 * Scaled-dot-product attention on the CPU, one (batch, query head) at a time. The K/V head it reads is
 * copied once into float64 scratch, so the inner loops index one monomorphic array type whatever the
 * storage dtype, and causally masked keys are skipped rather than scored.
 */
import { jsFunction } from '../../kernel-ir/render-js.js';
import { ATTENTION_DS } from '../../kernel-ir/rows.js';
import {
  type AttentionArgs,
  type AttentionBackwardArgs,
  type AttentionDims,
  type View,
  assertHeadsDense,
  attentionDims,
  headStart,
} from '../backend.js';
import { dataOf } from './storage.js';
import { assertDense, elementOffsets } from './strided.js';

const attentionDs = jsFunction(ATTENTION_DS);

interface Layout extends AttentionDims {
  /** Offsets of mask[b, h, i, 0] for each (b, h, i) row, and the mask's stride along keys. */
  maskRows: Int32Array | null;
  maskStride: number;
}

function layout(args: AttentionArgs | AttentionBackwardArgs): Layout {
  const m = args.mask;
  return {
    ...attentionDims(args),
    maskRows: m ? elementOffsets(m.shape.slice(0, 3), m.strides.slice(0, 3), m.offset) : null,
    maskStride: m ? m.strides[3] : 0,
  };
}

/** Element offset (from the view's start) of the K/V head that query head `bh` = b·H + h reads. */
function kvHeadStart(L: Layout, bh: number): number {
  const [b, hk] = kvHeadOf(L, bh);
  return (b * L.Hkv + hk) * L.S * L.D;
}

/** The batch and K/V head of the rows query head `bh` = b·H + h reads. */
function kvHeadOf(L: Layout, bh: number): [b: number, hk: number] {
  return [Math.floor(bh / L.H), Math.floor((bh % L.H) / (L.H / L.Hkv))];
}

/** Copies `count` elements of a dense view, from element `start` of it, into float64 scratch. */
function load(view: View, start: number, count: number, into: Float64Array): Float64Array {
  const src = dataOf(view);
  const base = view.offset + start;
  for (let i = 0; i < count; i++) into[i] = src[base + i];
  return into;
}

/**
 * Fills p[0..S) with the probabilities of query row `row` (its vector at q[qOff..]) over the keys in
 * `k` (float64 [S, D]), and returns the row's log-sum-exp: -Infinity when every key is masked, and then
 * p is all zeros. Returns also how many leading keys the causal limit allows (p is 0 beyond it).
 */
function scoreRow(
  args: AttentionArgs | AttentionBackwardArgs,
  L: Layout,
  row: number,
  q: Float64Array,
  qOff: number,
  k: Float64Array,
  p: Float64Array,
): number {
  const { S, D } = L;
  const i = row % L.T;
  const limit = args.causal ? Math.max(0, Math.min(S, i + (S - L.T) + 1)) : S;
  const mask = args.mask && dataOf(args.mask);
  const maskRow = mask ? L.maskRows![row] : 0;
  const maskStride = L.maskStride;
  const scale = args.scale;
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < limit; j++) {
    if (mask && !mask[maskRow + j * maskStride]) {
      p[j] = Number.NEGATIVE_INFINITY;
      continue;
    }
    let s = 0;
    const kOff = j * D;
    for (let d = 0; d < D; d++) s += q[qOff + d] * k[kOff + d];
    s *= scale;
    p[j] = s;
    if (s > max) max = s;
  }
  p.fill(0, limit);
  if (max === Number.NEGATIVE_INFINITY) {
    p.fill(0, 0, limit);
    return max;
  }
  let sum = 0;
  for (let j = 0; j < limit; j++) {
    const e = Math.exp(p[j] - max);
    p[j] = e;
    sum += e;
  }
  const inv = 1 / sum;
  for (let j = 0; j < limit; j++) p[j] *= inv;
  return max + Math.log(sum);
}

export function attention(args: AttentionArgs): void {
  assertDense('attention', args.q);
  assertHeadsDense('cpu attention', args.k, args.v);
  const L = layout(args);
  const { T, S, D } = L;
  const o = dataOf(args.out);
  const lse = dataOf(args.lse);
  const p = new Float64Array(S);
  const q = new Float64Array(T * D);
  const k = new Float64Array(S * D);
  const v = new Float64Array(S * D);
  const acc = new Float64Array(D);
  for (let bh = 0; bh < L.B * L.H; bh++) {
    load(args.q, bh * T * D, T * D, q);
    const [b, hk] = kvHeadOf(L, bh);
    load(args.k, headStart(args.k, b, hk) - args.k.offset, S * D, k);
    load(args.v, headStart(args.v, b, hk) - args.v.offset, S * D, v);
    for (let i = 0; i < T; i++) {
      const row = bh * T + i;
      lse[row] = scoreRow(args, L, row, q, i * D, k, p);
      acc.fill(0);
      for (let j = 0; j < S; j++) {
        const pj = p[j];
        if (pj === 0) continue;
        const vOff = j * D;
        for (let d = 0; d < D; d++) acc[d] += pj * v[vOff + d];
      }
      const oOff = row * D;
      for (let d = 0; d < D; d++) o[oOff + d] = acc[d];
    }
  }
}

/**
 * Recomputes each probability row P, then with dP = dO·Vᵀ and delta = rowsum(dO ∘ O):
 * dS = P ∘ (dP − delta), dQ = scale·dS·K, dK += scale·dSᵀ·Q, dV += Pᵀ·dO.
 */
export function attentionBackward(args: AttentionBackwardArgs): void {
  assertDense('attentionBackward', args.q, args.k, args.v, args.out, args.dout);
  const L = layout(args);
  const { T, S, D } = L;
  const dqOut = dataOf(args.dq);
  const dkOut = dataOf(args.dk);
  const dvOut = dataOf(args.dv);
  dkOut.fill(0);
  dvOut.fill(0);
  const p = new Float64Array(S);
  const q = new Float64Array(T * D);
  const out = new Float64Array(T * D);
  const dout = new Float64Array(T * D);
  const k = new Float64Array(S * D);
  const v = new Float64Array(S * D);
  const dk = new Float64Array(S * D);
  const dv = new Float64Array(S * D);
  const dq = new Float64Array(D);
  for (let bh = 0; bh < L.B * L.H; bh++) {
    load(args.q, bh * T * D, T * D, q);
    load(args.out, bh * T * D, T * D, out);
    load(args.dout, bh * T * D, T * D, dout);
    const head = kvHeadStart(L, bh);
    load(args.k, head, S * D, k);
    load(args.v, head, S * D, v);
    dk.fill(0);
    dv.fill(0);
    for (let i = 0; i < T; i++) {
      const row = bh * T + i;
      const rOff = i * D;
      scoreRow(args, L, row, q, rOff, k, p);
      let delta = 0;
      for (let d = 0; d < D; d++) delta += dout[rOff + d] * out[rOff + d];
      dq.fill(0);
      for (let j = 0; j < S; j++) {
        const pj = p[j];
        if (pj === 0) continue;
        const jOff = j * D;
        let dp = 0;
        for (let d = 0; d < D; d++) {
          const g = dout[rOff + d];
          dp += g * v[jOff + d];
          dv[jOff + d] += pj * g;
        }
        const ds = attentionDs(pj, dp, delta, args.scale);
        for (let d = 0; d < D; d++) {
          dq[d] += ds * k[jOff + d];
          dk[jOff + d] += ds * q[rOff + d];
        }
      }
      for (let d = 0; d < D; d++) dqOut[row * D + d] = dq[d];
    }
    // Query heads of one group share a K/V head: their gradients add up (dk/dv are dense from offset 0).
    for (let e = 0; e < S * D; e++) {
      dkOut[head + e] += dk[e];
      dvOut[head + e] += dv[e];
    }
  }
}

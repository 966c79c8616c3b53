/**
 * Scaled-dot-product attention forward, flash style: a workgroup takes 64 query rows of one (batch, head),
 * one row per thread; K/V tiles are staged in workgroup memory and each row keeps a running max, denominator
 * and output accumulator, so the T×S score matrix never exists. Causal blocks stop at the last key any of
 * their rows may see. Head size is a pipeline constant (rounded up to a power of two): registers need a fixed
 * size. Long sequences run as several dispatches over chunks of keys, the running state carried in the
 * outputs, because Mesa's llvmpipe silently cuts short any loop past 65535 iterations in one invocation.
 * Decoding (T = 1) has its own kernel; CPU rasterisers another (attention-software.ts). The backward is in
 * attention-backward.ts.
 */
import type { AttentionArgs } from '../../backend.js';
import { type GpuQueue, grid } from '../queue.js';
import { GROUP_BUILTINS, LINEAR_GROUP, buffer } from '../wgsl.js';
import {
  ROWS,
  type Shape,
  UNITS_PER_PASS,
  bindingsOf,
  common,
  dispatchForward,
  headBase,
  maskDecl,
  params,
  shapeOf,
} from './attention-shared.js';
import { softwareAttention, softwareAttentionFits } from './attention-software.js';

function forwardSource(s: Shape, hasMask: boolean): string {
  return `${common(s, hasMask)}
${buffer(1, 'Q', 'float32')}
${buffer(2, 'K', 'float32')}
${buffer(3, 'V', 'float32')}
${buffer(4, 'O', 'float32', true)}
${buffer(5, 'LSE', 'float32', true)}
${buffer(6, 'LSUM', 'float32', true)}
${maskDecl(7, hasMask)}
var<workgroup> Ks: array<f32, ${s.TILE * s.DM}>;
var<workgroup> Vs: array<f32, ${s.TILE * s.DM}>;
@compute @workgroup_size(${ROWS})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let H = pu(1u); let Hkv = pu(2u); let T = pu(3u); let S = pu(4u); let D = pu(5u); let scale = pf(6u);
  let qBlocks = (T + ${ROWS - 1}u) / ${ROWS}u;
  let bh = group / qBlocks;
  if (bh >= pu(0u) * H) { return; }
  let b = bh / H; let h = bh % H; let hk = h / (H / Hkv);
  let i0 = (group % qBlocks) * ${ROWS}u;
  let i = i0 + lid.x;
  let valid = i < T;
  let qb = pu(9u) + (bh * T + min(i, T - 1u)) * D;
  let kb = ${headBase(0, 'b', 'hk')};
  let vb = ${headBase(1, 'b', 'hk')};
  // Running state (max m, denominator l, unnormalised output) lives in O, LSE and LSUM between passes.
  let row = bh * T + min(i, T - 1u);
  let first = pu(22u) == 1u;
  var q: array<f32, ${s.DM}>;
  var acc: array<f32, ${s.DM}>;
  for (var d = 0u; d < D; d++) { q[d] = Q[qb + d]; acc[d] = select(O[row * D + d], 0.0, first); }
  var m = select(LSE[row], neg_inf(), first);
  var l = select(LSUM[row], 0.0, first);
  var kEnd = pu(21u);
  if (pu(7u) == 1u) { kEnd = min(kEnd, u32(clamp(i32(i0) + ${ROWS} + i32(S) - i32(T), 0, i32(S)))); }
  for (var j0 = pu(20u); j0 < kEnd; j0 += TILE) {
    for (var e = lid.x; e < TILE * D; e += ${ROWS}u) {
      let r = e / D; let d = e % D; let j = min(j0 + r, S - 1u);
      Ks[r * DM + d] = K[kb + j * D + d];
      Vs[r * DM + d] = V[vb + j * D + d];
    }
    workgroupBarrier();
    if (valid) {
      var sc: array<f32, ${s.TILE}>;
      var tmax = neg_inf();
      for (var r = 0u; r < TILE; r++) {
        sc[r] = neg_inf();
        if (allowed(b, h, i, j0 + r)) {
          var dot = 0.0;
          for (var d = 0u; d < D; d++) { dot += q[d] * Ks[r * DM + d]; }
          sc[r] = dot * scale;
          tmax = max(tmax, sc[r]);
        }
      }
      if (tmax > neg_inf()) {
        let mNew = max(m, tmax);
        let alpha = exp(m - mNew);
        l = l * alpha;
        for (var d = 0u; d < D; d++) { acc[d] = acc[d] * alpha; }
        for (var r = 0u; r < TILE; r++) {
          if (sc[r] > neg_inf()) {
            let p = exp(sc[r] - mNew);
            l += p;
            for (var d = 0u; d < D; d++) { acc[d] += p * Vs[r * DM + d]; }
          }
        }
        m = mNew;
      }
    }
    workgroupBarrier();
  }
  if (valid) {
    if (pu(23u) == 1u) {
      for (var d = 0u; d < D; d++) { O[row * D + d] = select(0.0, acc[d] / l, l > 0.0); }
      LSE[row] = select(neg_inf(), m + log(l), l > 0.0);
    } else {
      for (var d = 0u; d < D; d++) { O[row * D + d] = acc[d]; }
      LSE[row] = m;
      LSUM[row] = l;
    }
  }
}`;
}

/**
 * Decoding (one query row per head against a KV cache): the row kernel would run one thread of 64, so here
 * the 64 threads of a (batch, head) workgroup split the keys, each keeping its own running max, denominator
 * and accumulator; the partial states are then merged through workgroup memory, DM/16 slices at a time.
 */
function decodeSource(s: Shape, hasMask: boolean): string {
  return `${common(s, hasMask)}
${buffer(1, 'Q', 'float32')}
${buffer(2, 'K', 'float32')}
${buffer(3, 'V', 'float32')}
${buffer(4, 'O', 'float32', true)}
${buffer(5, 'LSE', 'float32', true)}
${maskDecl(6, hasMask)}
var<workgroup> ms: array<f32, ${ROWS}>;
var<workgroup> ls: array<f32, ${ROWS}>;
var<workgroup> part: array<f32, ${ROWS * 16}>;
@compute @workgroup_size(${ROWS})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let H = pu(1u); let Hkv = pu(2u); let S = pu(4u); let D = pu(5u); let scale = pf(6u);
  let bh = group;
  if (bh >= pu(0u) * H) { return; }
  let b = bh / H; let h = bh % H; let hk = h / (H / Hkv);
  let qb = pu(9u) + bh * D;
  let kb = ${headBase(0, 'b', 'hk')};
  let vb = ${headBase(1, 'b', 'hk')};
  var acc: array<f32, ${s.DM}>;
  for (var d = 0u; d < D; d++) { acc[d] = 0.0; }
  var m = neg_inf();
  var l = 0.0;
  for (var j = lid.x; j < S; j += ${ROWS}u) {
    if (allowed(b, h, 0u, j)) {
      var dot = 0.0;
      for (var d = 0u; d < D; d++) { dot += Q[qb + d] * K[kb + j * D + d]; }
      let sc = dot * scale;
      let mNew = max(m, sc);
      let alpha = exp(m - mNew);
      let p = exp(sc - mNew);
      l = l * alpha + p;
      for (var d = 0u; d < D; d++) { acc[d] = acc[d] * alpha + p * V[vb + j * D + d]; }
      m = mNew;
    }
  }
  ms[lid.x] = m;
  workgroupBarrier();
  var M = neg_inf();
  for (var t = 0u; t < ${ROWS}u; t++) { M = max(M, ms[t]); }
  let f = select(exp(m - M), 0.0, m == neg_inf());
  ls[lid.x] = l * f;
  workgroupBarrier();
  var L = 0.0;
  for (var t = 0u; t < ${ROWS}u; t++) { L += ls[t]; }
  for (var d0 = 0u; d0 < D; d0 += 16u) {
    for (var e = 0u; e < 16u; e++) { part[lid.x * 16u + e] = select(0.0, acc[min(d0 + e, ${s.DM - 1}u)] * f, d0 + e < D); }
    workgroupBarrier();
    if (lid.x < 16u && d0 + lid.x < D) {
      var sum = 0.0;
      for (var t = 0u; t < ${ROWS}u; t++) { sum += part[t * 16u + lid.x]; }
      O[bh * D + d0 + lid.x] = select(0.0, sum / L, L > 0.0);
    }
    workgroupBarrier();
  }
  if (lid.x == 0u) { LSE[bh] = select(neg_inf(), M + log(L), L > 0.0); }
}`;
}

export function attention(queue: GpuQueue, args: AttentionArgs): void {
  const s = shapeOf(args);
  if (s.B * s.H * s.T === 0) return;
  const hasMask = !!args.mask;
  // Each thread walks S/64 keys in one pass: decode only while that stays within the per-pass loop budget.
  if (s.T === 1 && (s.S * s.DM) / ROWS < UNITS_PER_PASS) {
    const decode = queue.pipeline(`attention decode|${s.DM}|${hasMask}`, () => decodeSource(s, hasMask));
    queue.dispatch(
      `attention decode q[${args.q.shape}] k[${args.k.shape}]`,
      decode,
      bindingsOf([args.q, args.k, args.v, args.out, args.lse, args.mask], [3, 4]),
      params(args, s, [0, 0, 0], { begin: 0, end: s.S, first: true, last: true }),
      grid(s.B * s.H),
    );
    return;
  }
  if (queue.software && softwareAttentionFits(args, s)) {
    softwareAttention(queue, args, s);
    return;
  }
  const pipeline = queue.pipeline(`attention|${s.DM}|${hasMask}`, () => forwardSource(s, hasMask));
  dispatchForward(queue, args, s, pipeline, s.TILE, ROWS);
}

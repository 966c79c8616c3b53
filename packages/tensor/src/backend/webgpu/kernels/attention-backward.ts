/**
 * Attention backward without atomics: one kernel walks keys per query row (dQ, and the row's
 * delta = dO·O), another walks query rows per key (dK, dV), each recomputing probabilities from the saved
 * log-sum-exp; both run as passes over chunks of keys (or rows), carrying their sums in the outputs.
 */
import { ATTENTION_DS } from '../../../kernel-ir/rows.js';
import type { AttentionBackwardArgs } from '../../backend.js';
import { type GpuQueue, grid } from '../queue.js';
import { GROUP_BUILTINS, LINEAR_GROUP, buffer } from '../wgsl.js';
import { rowFunctions } from './rows.js';
import {
  ROWS,
  type Shape,
  bindingsOf,
  chunks,
  common,
  maskDecl,
  params,
  shapeOf,
} from './attention-shared.js';

/** dQ per query row (and delta = dO·O, saved for the dK/dV kernel). */
function dqSource(s: Shape, hasMask: boolean): string {
  return `${common(s, hasMask)}
${buffer(1, 'Q', 'float32')}
${buffer(2, 'K', 'float32')}
${buffer(3, 'V', 'float32')}
${buffer(4, 'O', 'float32')}
${buffer(5, 'LSE', 'float32')}
${buffer(6, 'dO', 'float32')}
${buffer(7, 'dQ', 'float32', true)}
${buffer(8, 'DELTA', 'float32', true)}
${maskDecl(9, hasMask)}
${rowFunctions(ATTENTION_DS)}
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
  let row = bh * T + min(i, T - 1u);
  let qb = pu(9u) + row * D;
  let ob = pu(17u) + row * D;
  let gb = pu(19u) + row * D;
  let kb = pu(10u) + (b * Hkv + hk) * S * D;
  let vb = pu(11u) + (b * Hkv + hk) * S * D;
  let lse = LSE[pu(18u) + row];
  let first = pu(22u) == 1u;
  var q: array<f32, ${s.DM}>;
  var g: array<f32, ${s.DM}>;
  var dq: array<f32, ${s.DM}>;
  var delta = 0.0;
  for (var d = 0u; d < D; d++) {
    q[d] = Q[qb + d];
    g[d] = dO[gb + d];
    dq[d] = select(dQ[row * D + d], 0.0, first);
    delta += g[d] * O[ob + d];
  }
  var kEnd = pu(21u);
  if (pu(7u) == 1u) { kEnd = min(kEnd, u32(clamp(i32(i0) + ${ROWS} + i32(S) - i32(T), 0, i32(S)))); }
  for (var j0 = pu(20u); j0 < kEnd; j0 += TILE) {
    for (var e = lid.x; e < TILE * D; e += ${ROWS}u) {
      let r = e / D; let d = e % D; let j = min(j0 + r, S - 1u);
      Ks[r * DM + d] = K[kb + j * D + d];
      Vs[r * DM + d] = V[vb + j * D + d];
    }
    workgroupBarrier();
    if (valid && lse > neg_inf()) {
      for (var r = 0u; r < TILE; r++) {
        if (allowed(b, h, i, j0 + r)) {
          var sdot = 0.0;
          var pdot = 0.0;
          for (var d = 0u; d < D; d++) { sdot += q[d] * Ks[r * DM + d]; pdot += g[d] * Vs[r * DM + d]; }
          let p = exp(sdot * scale - lse);
          let ds = ${ATTENTION_DS.name}(p, pdot, delta, scale);
          for (var d = 0u; d < D; d++) { dq[d] += ds * Ks[r * DM + d]; }
        }
      }
    }
    workgroupBarrier();
  }
  if (valid) {
    for (var d = 0u; d < D; d++) { dQ[row * D + d] = dq[d]; }
    DELTA[row] = delta;
  }
}`;
}

/** dK, dV per key: walks every query row (of every query head sharing this K/V head) that may see it. */
function dkvSource(s: Shape, hasMask: boolean): string {
  return `${common(s, hasMask)}
${buffer(1, 'Q', 'float32')}
${buffer(2, 'K', 'float32')}
${buffer(3, 'V', 'float32')}
${buffer(4, 'LSE', 'float32')}
${buffer(5, 'dO', 'float32')}
${buffer(6, 'DELTA', 'float32')}
${buffer(7, 'dK', 'float32', true)}
${buffer(8, 'dV', 'float32', true)}
${maskDecl(9, hasMask)}
${rowFunctions(ATTENTION_DS)}
var<workgroup> Qs: array<f32, ${s.TILE * s.DM}>;
var<workgroup> Gs: array<f32, ${s.TILE * s.DM}>;
var<workgroup> Ls: array<f32, ${s.TILE}>;
var<workgroup> Ds: array<f32, ${s.TILE}>;
@compute @workgroup_size(${ROWS})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let H = pu(1u); let Hkv = pu(2u); let T = pu(3u); let S = pu(4u); let D = pu(5u); let scale = pf(6u);
  let kBlocks = (S + ${ROWS - 1}u) / ${ROWS}u;
  let bhk = group / kBlocks;
  if (bhk >= pu(0u) * Hkv) { return; }
  let b = bhk / Hkv; let hk = bhk % Hkv;
  let j0 = (group % kBlocks) * ${ROWS}u;
  let j = j0 + lid.x;
  let valid = j < S;
  let kvRow = bhk * S + min(j, S - 1u);
  var k: array<f32, ${s.DM}>;
  var v: array<f32, ${s.DM}>;
  var dk: array<f32, ${s.DM}>;
  var dv: array<f32, ${s.DM}>;
  let first = pu(22u) == 1u;
  for (var d = 0u; d < D; d++) {
    k[d] = K[pu(10u) + kvRow * D + d];
    v[d] = V[pu(11u) + kvRow * D + d];
    dk[d] = select(dK[kvRow * D + d], 0.0, first);
    dv[d] = select(dV[kvRow * D + d], 0.0, first);
  }
  // Causal: query i sees key j when i >= j - (S - T); the block's first key bounds where rows start.
  var iStart = 0u;
  if (pu(7u) == 1u) { iStart = u32(clamp(i32(j0) - (i32(S) - i32(T)), 0, i32(T))); }
  iStart = max((iStart / TILE) * TILE, pu(20u));
  let iEnd = min(T, pu(21u));
  let group_size = H / Hkv;
  for (var hh = 0u; hh < group_size; hh++) {
    let h = hk * group_size + hh;
    let bh = b * H + h;
    for (var i0 = iStart; i0 < iEnd; i0 += TILE) {
      for (var e = lid.x; e < TILE * D; e += ${ROWS}u) {
        let r = e / D; let d = e % D; let row = bh * T + min(i0 + r, T - 1u);
        Qs[r * DM + d] = Q[pu(9u) + row * D + d];
        Gs[r * DM + d] = dO[pu(19u) + row * D + d];
      }
      for (var r = lid.x; r < TILE; r += ${ROWS}u) {
        let row = bh * T + min(i0 + r, T - 1u);
        Ls[r] = LSE[pu(18u) + row];
        Ds[r] = DELTA[row];
      }
      workgroupBarrier();
      if (valid) {
        for (var r = 0u; r < TILE; r++) {
          if (Ls[r] > neg_inf() && allowed(b, h, i0 + r, j)) {
            var sdot = 0.0;
            var pdot = 0.0;
            for (var d = 0u; d < D; d++) { sdot += Qs[r * DM + d] * k[d]; pdot += Gs[r * DM + d] * v[d]; }
            let p = exp(sdot * scale - Ls[r]);
            let ds = ${ATTENTION_DS.name}(p, pdot, Ds[r], scale);
            for (var d = 0u; d < D; d++) { dv[d] += p * Gs[r * DM + d]; dk[d] += ds * Qs[r * DM + d]; }
          }
        }
      }
      workgroupBarrier();
    }
  }
  if (valid) {
    for (var d = 0u; d < D; d++) { dK[kvRow * D + d] = dk[d]; dV[kvRow * D + d] = dv[d]; }
  }
}`;
}

export function attentionBackward(queue: GpuQueue, args: AttentionBackwardArgs): void {
  const s = shapeOf(args);
  const hasMask = !!args.mask;
  const offsets: [number, number, number] = [args.out.offset, args.lse.offset, args.dout.offset];
  const rows = s.B * s.H * s.T;
  const delta = queue.pool.acquire('float32', Math.max(1, rows));
  try {
    if (rows > 0) {
      const dq = queue.pipeline(`attentionBackward dq|${s.DM}|${hasMask}`, () => dqSource(s, hasMask));
      for (const chunk of chunks(s.S, s.DM, s.TILE)) {
        queue.dispatch(
          `attentionBackward dQ q[${args.q.shape}] k[${args.k.shape}] keys ${chunk.begin}..${chunk.end}`,
          dq,
          [
            ...bindingsOf([args.q, args.k, args.v, args.out, args.lse, args.dout, args.dq], [6]),
            { storage: delta, write: true },
            ...bindingsOf([args.mask]),
          ],
          params(args, s, offsets, chunk),
          grid(s.B * s.H * Math.ceil(s.T / ROWS)),
        );
      }
    }
    if (s.B * s.Hkv * s.S === 0) return;
    const dkv = queue.pipeline(`attentionBackward dkv|${s.DM}|${hasMask}`, () => dkvSource(s, hasMask));
    // Each pass walks its query rows for every query head sharing the K/V head.
    for (const chunk of chunks(s.T, s.DM * (s.H / s.Hkv), s.TILE)) {
      queue.dispatch(
        `attentionBackward dK/dV q[${args.q.shape}] k[${args.k.shape}] rows ${chunk.begin}..${chunk.end}`,
        dkv,
        [
          ...bindingsOf([args.q, args.k, args.v, args.lse, args.dout]),
          { storage: delta },
          ...bindingsOf([args.dk, args.dv], [0, 1]),
          ...bindingsOf([args.mask]),
        ],
        params(args, s, offsets, chunk),
        grid(s.B * s.Hkv * Math.ceil(s.S / ROWS)),
      );
    }
  } finally {
    queue.release(delta);
  }
}

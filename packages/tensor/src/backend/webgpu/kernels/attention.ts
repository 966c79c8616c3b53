/**
 * Scaled-dot-product attention, flash style: a workgroup takes 64 query rows of one (batch, head), one row
 * per thread; K/V tiles are staged in workgroup memory and each row keeps a running max, denominator and
 * output accumulator, so the T×S score matrix never exists. Causal blocks stop at the last key any of their
 * rows may see. Backward without atomics: one kernel walks keys per query row (dQ, and the row's
 * delta = dO·O), another walks query rows per key (dK, dV), each recomputing probabilities from the saved
 * log-sum-exp. Head size is a pipeline constant (rounded up to a power of two): registers need a fixed size.
 *
 * Long sequences run as several dispatches over chunks of keys (or, for dK/dV, of query rows), each carrying
 * the running state in the output buffers: on Mesa's llvmpipe an invocation that loops over more than about
 * 25k key·dim units came back as zeros with no error, and per-chunk passes keep every invocation short.
 */
import type { AttentionArgs, AttentionBackwardArgs, View } from '../../backend.js';
import type { Binding, GpuQueue } from '../queue.js';
import { Params, grid } from '../queue.js';
import type { GpuStorage } from '../buffers.js';
import { GROUP_BUILTINS, INF, LINEAR_GROUP, PARAMS, buffer } from '../wgsl.js';

const ROWS = 64;

interface Shape {
  B: number;
  H: number;
  Hkv: number;
  T: number;
  S: number;
  D: number;
  DM: number;
  /** Keys (or query rows) per staged tile: two tiles of TILE×DM floats stay within 16 KiB. */
  TILE: number;
}

function shapeOf(args: AttentionArgs | AttentionBackwardArgs): Shape {
  const [B, H, T, D] = args.q.shape;
  const Hkv = args.k.shape[1];
  const S = args.k.shape[2];
  if (D > 256) throw new Error(`webgpu attention: head size ${D} exceeds 256 (q [${args.q.shape}])`);
  for (const [what, v] of Object.entries({ q: args.q, k: args.k, v: args.v }))
    if (v.dtype !== 'float32') throw new Error(`webgpu attention: ${what} must be float32, got ${v.dtype}`);
  const DM = Math.max(16, 2 ** Math.ceil(Math.log2(Math.max(1, D))));
  return { B, H, Hkv, T, S, D, DM, TILE: Math.max(4, Math.min(32, 1024 / DM)) };
}

/**
 * Words: B, H, Hkv, T, S, D, scale, causal, hasMask, q, k, v offsets, mask offset + 4 strides (12..16),
 * out, lse, dout offsets (17..19), then this pass's chunk: begin, end, first, last (20..23).
 */
function params(
  args: AttentionArgs | AttentionBackwardArgs,
  s: Shape,
  outOffsets: [number, number, number],
  chunk: Chunk,
): Params {
  const m = args.mask;
  return new Params()
    .u32(s.B, s.H, s.Hkv, s.T, s.S, s.D)
    .f32s(args.scale)
    .u32(args.causal ? 1 : 0, m ? 1 : 0, args.q.offset, args.k.offset, args.v.offset)
    .i32s(m ? m.offset : 0, ...(m ? m.strides : [0, 0, 0, 0]))
    .u32(...outOffsets, chunk.begin, chunk.end, chunk.first ? 1 : 0, chunk.last ? 1 : 0);
}

interface Chunk {
  begin: number;
  end: number;
  first: boolean;
  last: boolean;
}

/** Key·dim units one invocation handles per dispatch (see the note at the top). */
const UNITS_PER_PASS = 8192;

/** Splits [0, n) into passes of whole tiles, each within the per-invocation budget (`width` units per item). */
function chunks(n: number, width: number, tile: number): Chunk[] {
  const size = Math.max(tile, Math.floor(UNITS_PER_PASS / width / tile) * tile);
  const out: Chunk[] = [];
  for (let begin = 0; begin < n || out.length === 0; begin += size)
    out.push({ begin, end: Math.min(n, begin + size), first: begin === 0, last: begin + size >= n });
  return out;
}

/** Common WGSL: parameter names and the allowed(i, j) test (causal bottom-right alignment, optional mask). */
function common(s: Shape, hasMask: boolean): string {
  return `${PARAMS}
${INF}
const DM: u32 = ${s.DM}u;
const TILE: u32 = ${s.TILE}u;
fn allowed(b: u32, h: u32, i: u32, j: u32) -> bool {
  let S = pu(4u); let T = pu(3u);
  if (j >= S || i >= T) { return false; }
  if (pu(7u) == 1u && i32(j) > i32(i) + i32(S) - i32(T)) { return false; }
  ${
    hasMask
      ? 'let at = pi(12u) + i32(b) * pi(13u) + i32(h) * pi(14u) + i32(i) * pi(15u) + i32(j) * pi(16u); return mask[u32(at)] != 0u;'
      : 'return true;'
  }
}`;
}

function maskDecl(binding: number, hasMask: boolean): string {
  return hasMask ? buffer(binding, 'mask', 'bool') : '';
}

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
  let kb = pu(10u) + (b * Hkv + hk) * S * D;
  let vb = pu(11u) + (b * Hkv + hk) * S * D;
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

function bindingsOf(views: (View | null)[], writes: number[] = []): Binding[] {
  const out: Binding[] = [];
  views.forEach((v, k) => {
    if (v) out.push({ storage: v.storage as GpuStorage, write: writes.includes(k) });
  });
  return out;
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
  let kb = pu(10u) + (b * Hkv + hk) * S * D;
  let vb = pu(11u) + (b * Hkv + hk) * S * D;
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
  // Keys per thread stay far below llvmpipe's 65535-iteration loop limit for any S under ~4M/D.
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
  const pipeline = queue.pipeline(`attention|${s.DM}|${hasMask}`, () => forwardSource(s, hasMask));
  const lsum = queue.pool.acquire('float32', s.B * s.H * s.T);
  try {
    for (const chunk of chunks(s.S, s.DM, s.TILE)) {
      queue.dispatch(
        `attention q[${args.q.shape}] k[${args.k.shape}] keys ${chunk.begin}..${chunk.end}`,
        pipeline,
        [
          ...bindingsOf([args.q, args.k, args.v, args.out, args.lse], [3, 4]),
          { storage: lsum, write: true },
          ...bindingsOf([args.mask]),
        ],
        params(args, s, [0, 0, 0], chunk),
        grid(s.B * s.H * Math.ceil(s.T / ROWS)),
      );
    }
  } finally {
    queue.release(lsum);
  }
}

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
          let ds = p * (pdot - delta) * scale;
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
            let ds = p * (pdot - Ds[r]) * scale;
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

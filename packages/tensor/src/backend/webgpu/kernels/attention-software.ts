/**
 * Attention forward for CPU rasterisers (llvmpipe), where the SIMD lanes of a thread are invocations and
 * every storage read is a loop over those lanes: there the flash kernel's staging of K/V tiles through
 * workgroup memory only adds copies and barriers. Here each invocation takes ROWS query rows and reads K and V
 * straight from their buffers as vec4, so one read serves every row; the head dimension is a pipeline
 * constant, so the loops over it unroll and the rows' q and accumulators stay in registers. Same online
 * softmax, passes over keys and running state (O, LSE, LSUM) as the flash kernel in attention.ts.
 */
import type { AttentionArgs } from '../../backend.js';
import type { GpuQueue } from '../queue.js';
import { GROUP_BUILTINS, LINEAR_GROUP, buffer } from '../wgsl.js';
import { type Shape, common, dispatchForward, headBase, maskDecl } from './attention-shared.js';

/**
 * Query rows per invocation: each K/V vec4 read is used that many times; the rows' running values are the
 * lanes of one vector. Four for head sizes up to 64, else two: llvmpipe's first-use compile grows steeply
 * with the unrolled code (cold Mesa shader cache, this machine: 7 s at D = 64 with four rows).
 */
function rowsPerInvocation(D: number): number {
  return D <= 64 ? 4 : 2;
}
/** Invocations per workgroup (one SIMD vector of llvmpipe's 256-bit build). */
const LANES = 8;
/** Keys scored per step: the accumulators are rescaled once per step. */
const KEYS = 8;

/** Whether the software kernel applies: the head size and every row a whole number of vec4s. */
export function softwareAttentionFits(args: AttentionArgs, s: Shape): boolean {
  return (
    s.T > 1 &&
    s.D % 4 === 0 &&
    [args.q, args.k, args.v, args.out].every((v) => v.offset % 4 === 0) &&
    [args.k, args.v].every((v) => v.strides[0] % 4 === 0 && v.strides[1] % 4 === 0) &&
    args.lse.offset === 0
  );
}

function source(s: Shape, hasMask: boolean, ROWS: number): string {
  const D4 = s.D / 4;
  const rows = Array.from({ length: ROWS }, (_, r) => r);
  const lanes = ['x', 'y', 'z', 'w'];
  const perRow = (f: (r: number) => string) => rows.map(f).join(' ');
  const R = `vec${ROWS}<f32>`;
  const vecOfRows = (f: (r: number) => string) => `${R}(${rows.map(f).join(', ')})`;
  return `${common(s, hasMask)}
@group(0) @binding(1) var<storage, read> Q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> K: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> V: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> O: array<vec4<f32>>;
${buffer(5, 'LSE', 'float32', true)}
${buffer(6, 'LSUM', 'float32', true)}
${maskDecl(7, hasMask)}
const D4: u32 = ${D4}u;
@compute @workgroup_size(${LANES})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let H = pu(1u); let Hkv = pu(2u); let T = pu(3u); let S = pu(4u); let scale = pf(6u);
  let qBlocks = (T + ${ROWS * LANES - 1}u) / ${ROWS * LANES}u;
  let bh = group / qBlocks;
  if (bh >= pu(0u) * H) { return; }
  let b = bh / H; let h = bh % H; let hk = h / (H / Hkv);
  let i0 = (group % qBlocks) * ${ROWS * LANES}u;
  let i = i0 + lid.x * ${ROWS}u;
  let kb = (${headBase(0, 'b', 'hk')}) / 4u;
  let vb = (${headBase(1, 'b', 'hk')}) / 4u;
  let first = pu(22u) == 1u;
  // Rows past T read the last row (clamped) and are not written.
  ${perRow((r) => `let row${r} = bh * T + min(i + ${r}u, T - 1u);`)}
  ${perRow((r) => `var q${r}: array<vec4<f32>, D4>; var acc${r}: array<vec4<f32>, D4>;`)}
  for (var d = 0u; d < D4; d++) {
    ${perRow((r) => `q${r}[d] = Q[pu(9u) / 4u + row${r} * D4 + d]; acc${r}[d] = select(O[row${r} * D4 + d], vec4<f32>(0.0), first);`)}
  }
  // Running max and denominator of the rows, one per lane of a vector.
  var m = select(${vecOfRows((r) => `LSE[row${r}]`)}, ${R}(neg_inf()), first);
  var l = select(${vecOfRows((r) => `LSUM[row${r}]`)}, ${R}(0.0), first);
  var kEnd = pu(21u);
  if (pu(7u) == 1u) { kEnd = min(kEnd, u32(clamp(i32(i) + ${ROWS} + i32(S) - i32(T), 0, i32(S)))); }
  for (var j0 = pu(20u); j0 < kEnd; j0 += ${KEYS}u) {
    // A bound known only at run time keeps the compiler from unrolling the key loops too (compile time).
    let keys = min(${KEYS}u, kEnd - j0);
    var sc: array<${R}, ${KEYS}>;
    var tmax = ${R}(neg_inf());
    for (var t = 0u; t < keys; t++) {
      let j = j0 + t;
      let kr = kb + min(j, S - 1u) * D4;
      var dots = ${R}(0.0);
      for (var d = 0u; d < D4; d++) {
        let k = K[kr + d];
        dots += ${vecOfRows((r) => `dot(q${r}[d], k)`)};
      }
      let ok = vec${ROWS}<bool>(${rows.map((r) => `allowed(b, h, i + ${r}u, j)`).join(', ')});
      sc[t] = select(${R}(neg_inf()), dots * scale, ok);
      tmax = max(tmax, sc[t]);
    }
    let mNew = max(m, tmax);
    // A row that has seen no allowed key yet keeps l = 0 and acc = 0 (scale 1, not exp(-inf + inf)).
    let alpha = select(${R}(1.0), exp(m - mNew), mNew > ${R}(neg_inf()));
    l = l * alpha;
    for (var d = 0u; d < D4; d++) { ${perRow((r) => `acc${r}[d] *= alpha.${lanes[r]};`)} }
    for (var t = 0u; t < keys; t++) {
      let p = select(${R}(0.0), exp(sc[t] - mNew), sc[t] > ${R}(neg_inf()));
      l += p;
      let vr = vb + min(j0 + t, S - 1u) * D4;
      for (var d = 0u; d < D4; d++) {
        let v = V[vr + d];
        ${perRow((r) => `acc${r}[d] += p.${lanes[r]} * v;`)}
      }
    }
    m = mNew;
  }
  let last = pu(23u) == 1u;
  ${rows
    .map(
      (r) => `if (i + ${r}u < T) {
    let lr = l.${lanes[r]}; let mr = m.${lanes[r]};
    if (last) {
      for (var d = 0u; d < D4; d++) { O[row${r} * D4 + d] = select(vec4<f32>(0.0), acc${r}[d] / lr, lr > 0.0); }
      LSE[row${r}] = select(neg_inf(), mr + log(lr), lr > 0.0);
    } else {
      for (var d = 0u; d < D4; d++) { O[row${r} * D4 + d] = acc${r}[d]; }
      LSE[row${r}] = mr;
      LSUM[row${r}] = lr;
    }
  }`,
    )
    .join('\n  ')}
}`;
}

export function softwareAttention(queue: GpuQueue, args: AttentionArgs, s: Shape): void {
  const hasMask = !!args.mask;
  const rows = rowsPerInvocation(s.D);
  const pipeline = queue.pipeline(`attention software|${s.D}|${hasMask}`, () => source(s, hasMask, rows));
  dispatchForward(queue, args, s, pipeline, KEYS, rows * LANES);
}

/**
 * Batched matmul over strided operands (transposed and broadcast views need no copy: their strides are
 * parameters). Main path: 64×64 output tiles per 256-thread workgroup, K in steps of 16 staged through
 * workgroup memory, each thread accumulating a 4×4 register block; when an operand's rows are contiguous
 * and 4-aligned it is read as vec4. M = 1 (decoding) takes a matrix-vector kernel instead, which would
 * otherwise waste 63 of 64 tile rows. CPU rasterisers get a variant without workgroup memory (directSource).
 * Long K runs as several passes that add into the output (see K_PER_PASS).
 */
import type { View } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { Params, grid, type GpuQueue } from '../queue.js';
import { WGSL_INDEX } from '../../../kernel-ir/render-wgsl.js';
import { mergeAxes, renderOffsetWalk } from '../../../kernel-ir/walk.js';
import { PARAMS, buffer, sizeOfShape, storageType } from '../wgsl.js';

const TM = 64;
const TN = 64;
const TK = 16;
const K_PER_PASS = 8192;
/**
 * Register blocks (rows × columns of C per invocation) of the direct (software) kernel, largest first. On
 * llvmpipe every storage-buffer read is a loop over the SIMD lanes, so the cost is in the R + C reads per
 * k, against R·C multiply-adds: at n = 512..1024, 16×16 ran about 1.8x faster than the 16×4 it replaced.
 * Larger blocks run faster still (32×32: 2.5x) but llvmpipe's first-use compile grows steeply with them
 * (cold Mesa shader cache, this machine: 16×16 3-4 s, 32×16 12 s, 32×32 35 s), so 16×16 is the largest.
 */
export const DIRECT_BLOCKS: readonly (readonly [number, number])[] = [
  [16, 16],
  [16, 8],
  [8, 16],
  [8, 8],
  [8, 4],
  [4, 8],
  [4, 4],
];
/** Fewer workgroups than this would leave the rasteriser's threads idle: take a smaller block instead. */
const MIN_WORKGROUPS = 8;
/** Invocations per workgroup of the direct kernel, side by side along the columns (one SIMD vector). */
const DIRECT_LANES = 8;

/** Blocks may cover at most this much more than the output (rows and columns computed and not written). */
const MAX_OVERHANG = 1.25;

/** The largest block that covers the output with little overhang and still gives enough workgroups. */
export function directBlock(M: number, N: number, batches: number): readonly [number, number] {
  const snug = (size: number, tile: number) => Math.ceil(size / tile) * tile <= MAX_OVERHANG * size;
  const fits = DIRECT_BLOCKS.filter(([R, C]) => snug(M, R) && snug(N, DIRECT_LANES * C));
  const workgroups = ([R, C]: readonly [number, number]) =>
    Math.ceil(M / R) * Math.ceil(N / (DIRECT_LANES * C)) * batches;
  return fits.find((b) => workgroups(b) >= MIN_WORKGROUPS) ?? fits[fits.length - 1] ?? [4, 4];
}

/**
 * Words: M, N, K, a_off, sa_m, sa_k, b_off, sb_k, sb_n, batches, this pass's k range [begin, end) and whether
 * it adds to `out` (10..12), then batch shape, a strides, b strides (from 13).
 */
const BATCH = 13;
function batchOffsets(rb: number): string {
  const walk = renderOffsetWalk(
    {
      rank: rb,
      index: 'batch',
      extent: (d) => `pu(${BATCH + d}u)`,
      offsets: ['oa', 'ob'],
      stride: (k, d) => `pi(${BATCH + (k + 1) * rb + d}u)`,
    },
    WGSL_INDEX,
  );
  return [
    'fn batch_offsets(batch: u32) -> vec2<i32> {',
    '  var oa = pi(3u);',
    '  var ob = pi(6u);',
    ...walk.map((line) => `  ${line}`),
    '  return vec2<i32>(oa, ob);',
    '}',
  ].join('\n');
}

function tiledSource(t: string, rb: number, vecA: boolean, vecB: boolean): string {
  const zero = t === 'f32' ? '0.0' : '0';
  // With vec4 reads an operand is bound as array<vec4>; element e is word e/4, lane e%4.
  const aDecl = vecA
    ? `@group(0) @binding(1) var<storage, read> a4: array<vec4<${t}>>;`
    : buffer(1, 'a', t === 'f32' ? 'float32' : 'int32');
  const bDecl = vecB
    ? `@group(0) @binding(2) var<storage, read> b4: array<vec4<${t}>>;`
    : buffer(2, 'b', t === 'f32' ? 'float32' : 'int32');
  // A tile: 64 rows × 16 k. Scalar: each thread loads 4 elements; vec4: one vec4 along k per thread.
  const loadA = vecA
    ? `{
      let r = lid.y * 4u + lid.x / 4u; let kq = (lid.x % 4u) * 4u;
      let row = m0 + r; let k = k0 + kq;
      var v = vec4<${t}>(${zero});
      if (row < M && k < kEnd) { v = a4[u32(ao + i32(row) * sam + i32(k)) / 4u]; }
      As[kq][r] = v.x; As[kq + 1u][r] = v.y; As[kq + 2u][r] = v.z; As[kq + 3u][r] = v.w;
    }`
    : `for (var q = 0u; q < 4u; q++) {
      let e = q * 256u + lid.y * 16u + lid.x; let r = e / 16u; let kk = e % 16u;
      let row = m0 + r; let k = k0 + kk;
      var v = ${zero};
      if (row < M && k < kEnd) { v = a[u32(ao + i32(row) * sam + i32(k) * sak)]; }
      As[kk][r] = v;
    }`;
  // B tile: 16 k × 64 columns.
  const loadB = vecB
    ? `{
      let kk = lid.y; let cq = lid.x * 4u;
      let k = k0 + kk; let col = n0 + cq;
      var v = vec4<${t}>(${zero});
      if (k < kEnd && col < N) { v = b4[u32(bo + i32(k) * sbk + i32(col)) / 4u]; }
      Bs[kk][cq] = v.x; Bs[kk][cq + 1u] = v.y; Bs[kk][cq + 2u] = v.z; Bs[kk][cq + 3u] = v.w;
    }`
    : `for (var q = 0u; q < 4u; q++) {
      let e = q * 256u + lid.y * 16u + lid.x; let kk = e / 64u; let c = e % 64u;
      let k = k0 + kk; let col = n0 + c;
      var v = ${zero};
      if (k < kEnd && col < N) { v = b[u32(bo + i32(k) * sbk + i32(col) * sbn)]; }
      Bs[kk][c] = v;
    }`;
  return `${PARAMS}
${aDecl}
${bDecl}
@group(0) @binding(3) var<storage, read_write> out: array<${t}>;
var<workgroup> As: array<array<${t}, ${TM}>, ${TK}>;
var<workgroup> Bs: array<array<${t}, ${TN}>, ${TK}>;
${batchOffsets(rb)}
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let M = pu(0u); let N = pu(1u); let K = pu(2u);
  let sam = pi(4u); let sak = pi(5u); let sbk = pi(7u); let sbn = pi(8u);
  let mTiles = (M + ${TM - 1}u) / ${TM}u;
  let yz = wid.y + wid.z * nwg.y;
  let batch = yz / mTiles;
  if (batch >= pu(9u)) { return; }
  let m0 = (yz % mTiles) * ${TM}u;
  let n0 = wid.x * ${TN}u;
  let offs = batch_offsets(batch);
  let ao = offs.x; let bo = offs.y;
  var acc: array<vec4<${t}>, 4>;
  for (var i = 0u; i < 4u; i++) { acc[i] = vec4<${t}>(${zero}); }
  let kEnd = pu(11u);
  for (var k0 = pu(10u); k0 < kEnd; k0 += ${TK}u) {
    ${loadA}
    ${loadB}
    workgroupBarrier();
    for (var kk = 0u; kk < ${TK}u; kk++) {
      let bv = vec4<${t}>(Bs[kk][lid.x * 4u], Bs[kk][lid.x * 4u + 1u], Bs[kk][lid.x * 4u + 2u], Bs[kk][lid.x * 4u + 3u]);
      ${[0, 1, 2, 3].map((i) => `acc[${i}] += As[kk][lid.y * 4u + ${i}u] * bv;`).join(' ')}
    }
    workgroupBarrier();
  }
  let ob = batch * M * N;
  let add = pu(12u) == 1u;
  for (var i = 0u; i < 4u; i++) {
    let row = m0 + lid.y * 4u + i;
    if (row >= M) { break; }
    for (var j = 0u; j < 4u; j++) {
      let col = n0 + lid.x * 4u + j;
      if (col < N) {
        let at = ob + row * N + col;
        out[at] = select(acc[i][j], out[at] + acc[i][j], add);
      }
    }
  }
}`;
}

/**
 * For CPU rasterisers (llvmpipe): an R×C register block per invocation (C a multiple of 4), reading A and B
 * straight from the buffers, four k at a time. There workgroup memory is ordinary memory behind barriers, so
 * staging tiles costs copies and synchronisation and buys nothing the CPU caches do not already give.
 * The code is straight-line (no tail loop, no indexed accumulator array): LLVM's compile time grows fast
 * with the size of the shader, and llvmpipe compiles it on first use.
 */
function directSource(
  t: string,
  rb: number,
  vecA: boolean,
  vecB: boolean,
  vecOut: boolean,
  R: number,
  C: number,
): string {
  const zero = t === 'f32' ? '0.0' : '0';
  const dt = t === 'f32' ? 'float32' : 'int32';
  const aDecl = vecA ? `@group(0) @binding(1) var<storage, read> a4: array<vec4<${t}>>;` : buffer(1, 'a', dt);
  const bDecl = vecB ? `@group(0) @binding(2) var<storage, read> b4: array<vec4<${t}>>;` : buffer(2, 'b', dt);
  const outDecl = vecOut
    ? `@group(0) @binding(3) var<storage, read_write> out4: array<vec4<${t}>>;`
    : buffer(3, 'out', dt, true);
  const four = [0, 1, 2, 3];
  const rowsR = Array.from({ length: R }, (_, i) => i);
  const quads = Array.from({ length: C / 4 }, (_, j) => j);
  const colsC = Array.from({ length: C }, (_, c) => c);
  // With vec4 A rows K is a multiple of 4; otherwise the last step may run past kEnd: k + q is clamped to a
  // valid row and both factors are zeroed (selected, not multiplied: 0 · ∞ would be NaN).
  const partial = !vecA;
  const kq = (q: number) => (q === 0 || !partial ? `k + ${q}u` : `kq${q}`);
  const loadA = (r: number) =>
    vecA
      ? `a4[u32(ao + i32(ra${r}) * sam + i32(k)) / 4u]`
      : `select(vec4<${t}>(${zero}), vec4<${t}>(${four.map((q) => `a[u32(ao + i32(ra${r}) * sam + i32(${kq(q)}) * sak)]`).join(', ')}), live)`;
  const loadB = (q: number, j: number) => {
    const v = vecB
      ? `b4[u32(bo + i32(${kq(q)}) * sbk + i32(cv${j})) / 4u]`
      : `vec4<${t}>(${four.map((c) => `b[u32(bo + i32(${kq(q)}) * sbk + i32(cb${4 * j + c}) * sbn)]`).join(', ')})`;
    return q === 0 || !partial ? v : `select(vec4<${t}>(${zero}), ${v}, k + ${q}u < kEnd)`;
  };
  // Quad j of row r's accumulators into the output: one vec4 store, or (N not a multiple of 4) the columns
  // that are inside the matrix one by one.
  const store = (r: number, j: number) => {
    const acc = `acc${r}_${j}`;
    if (vecOut)
      return `if (c0 + ${4 * j}u < N) { let at = (rowAt + c0) / 4u + ${j}u; if (add) { out4[at] += ${acc}; } else { out4[at] = ${acc}; } }`;
    return four
      .map(
        (c) =>
          `if (c0 + ${4 * j + c}u < N) { let at = rowAt + c0 + ${4 * j + c}u; if (add) { out[at] += ${acc}[${c}]; } else { out[at] = ${acc}[${c}]; } }`,
      )
      .join(' ');
  };
  return `${PARAMS}
${aDecl}
${bDecl}
${outDecl}
${batchOffsets(rb)}
@compute @workgroup_size(${DIRECT_LANES})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let M = pu(0u); let N = pu(1u);
  let sam = pi(4u); let sak = pi(5u); let sbk = pi(7u); let sbn = pi(8u);
  let mTiles = (M + ${R - 1}u) / ${R}u;
  let yz = wid.y + wid.z * nwg.y;
  let batch = yz / mTiles;
  if (batch >= pu(9u)) { return; }
  let r0 = (yz % mTiles) * ${R}u;
  let c0 = wid.x * ${DIRECT_LANES * C}u + lid.x * ${C}u;
  let offs = batch_offsets(batch);
  let ao = offs.x; let bo = offs.y;
  // Out-of-range rows and columns read a valid neighbour (clamped) and are simply not written.
  ${rowsR.map((r) => `let ra${r} = min(r0 + ${r}u, M - 1u);`).join(' ')}
  ${vecB ? quads.map((j) => `let cv${j} = min(c0 + ${4 * j}u, N - 4u);`).join(' ') : colsC.map((c) => `let cb${c} = min(c0 + ${c}u, N - 1u);`).join(' ')}
  ${rowsR.flatMap((r) => quads.map((j) => `var acc${r}_${j} = vec4<${t}>(${zero});`)).join(' ')}
  let kEnd = pu(11u);
  for (var k = pu(10u); k < kEnd; k += 4u) {
    ${
      partial
        ? `let kq1 = min(k + 1u, kEnd - 1u); let kq2 = min(k + 2u, kEnd - 1u); let kq3 = min(k + 3u, kEnd - 1u);
    let live = vec4<bool>(${four.map((q) => `k + ${q}u < kEnd`).join(', ')});`
        : ''
    }
    ${quads.map((j) => four.map((q) => `let b${q}_${j} = ${loadB(q, j)};`).join(' ')).join('\n    ')}
    ${rowsR.map((r) => `{ let av = ${loadA(r)}; ${quads.map((j) => `acc${r}_${j} += av.x * b0_${j} + av.y * b1_${j} + av.z * b2_${j} + av.w * b3_${j};`).join(' ')} }`).join('\n    ')}
  }
  let ob = batch * M * N;
  let add = pu(12u) == 1u;
  ${rowsR.map((r) => `if (r0 + ${r}u < M) { let rowAt = ob + (r0 + ${r}u) * N; ${quads.map((j) => store(r, j)).join(' ')} }`).join('\n  ')}
}`;
}

/** One output column per thread; the row of A is staged through workgroup memory 256 values at a time. */
function gemvSource(t: string, rb: number): string {
  const zero = t === 'f32' ? '0.0' : '0';
  const dt = t === 'f32' ? 'float32' : 'int32';
  return `${PARAMS}
${buffer(1, 'a', dt)}
${buffer(2, 'b', dt)}
${buffer(3, 'out', dt, true)}
var<workgroup> av: array<${t}, 256>;
${batchOffsets(rb)}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let N = pu(1u); let K = pu(2u);
  let sak = pi(5u); let sbk = pi(7u); let sbn = pi(8u);
  let batch = wid.y;
  let offs = batch_offsets(batch);
  let col = wid.x * 256u + lid.x;
  var acc = ${zero};
  let kEnd = pu(11u);
  for (var k0 = pu(10u); k0 < kEnd; k0 += 256u) {
    let k = k0 + lid.x;
    av[lid.x] = select(${zero}, a[u32(offs.x + i32(min(k, K - 1u)) * sak)], k < kEnd);
    workgroupBarrier();
    if (col < N) {
      let n = min(256u, kEnd - k0);
      for (var kk = 0u; kk < n; kk++) { acc += av[kk] * b[u32(offs.y + i32(k0 + kk) * sbk + i32(col) * sbn)]; }
    }
    workgroupBarrier();
  }
  if (col < N) {
    let at = batch * N + col;
    out[at] = select(acc, out[at] + acc, pu(12u) == 1u);
  }
}`;
}

export function matmul(queue: GpuQueue, a: View, b: View, out: View): void {
  const rank = out.shape.length;
  const M = out.shape[rank - 2];
  const N = out.shape[rank - 1];
  const K = a.shape[rank - 1];
  const batchShape = out.shape.slice(0, rank - 2);
  const batches = sizeOfShape(batchShape);
  if (batches * M * N === 0) return;
  const t = storageType(a.dtype);
  if (t === 'u32') throw new Error('webgpu matmul: bool operands must be cast first');
  const walk = mergeAxes(batchShape, [a.strides.slice(0, rank - 2), b.strides.slice(0, rank - 2)]);
  const rb = walk.shape.length;
  const [sam, sak] = [a.strides[rank - 2], a.strides[rank - 1]];
  const [sbk, sbn] = [b.strides[rank - 2], b.strides[rank - 1]];
  // Passes over K: on Mesa's llvmpipe a loop that runs more than 65535 iterations in one invocation is cut
  // short (its results silently wrong), so no invocation walks more than K_PER_PASS values of k.
  const passes: Params[] = [];
  for (let k0 = 0; k0 < K || passes.length === 0; k0 += K_PER_PASS) {
    passes.push(
      new Params()
        .u32(M, N, K)
        .i32s(a.offset, sam, sak, b.offset, sbk, sbn)
        .u32(batches, k0, Math.min(K, k0 + K_PER_PASS), k0 > 0 ? 1 : 0)
        .i32s(...walk.shape, ...walk.strides[0], ...walk.strides[1]),
    );
  }
  const bindings = [
    { storage: a.storage as GpuStorage },
    { storage: b.storage as GpuStorage },
    { storage: out.storage as GpuStorage, write: true },
  ];
  const label = `matmul ${a.dtype}[${a.shape}] @ [${b.shape}]`;
  if (M === 1 && batches <= 65535) {
    const pipeline = queue.pipeline(`gemv|${t}|${rb}`, () => gemvSource(t, rb));
    for (const params of passes)
      queue.dispatch(label, pipeline, bindings, params, [Math.ceil(N / 256), batches]);
    return;
  }
  // vec4 reads need 4-aligned contiguous rows at every batch offset (batch strides multiples of 4 too).
  const aligned = (off: number, rowStride: number, unit: number, len: number, batchStrides: number[]) =>
    unit === 1 &&
    off % 4 === 0 &&
    rowStride % 4 === 0 &&
    len % 4 === 0 &&
    batchStrides.every((s) => s % 4 === 0);
  const vecA = aligned(a.offset, sam, sak, K, walk.strides[0]) && M > 1;
  const vecB = aligned(b.offset, sbk, sbn, N, walk.strides[1]);
  if (queue.software) {
    const [R, C] = directBlock(M, N, batches);
    const vecOut = out.offset % 4 === 0 && N % 4 === 0;
    const pipeline = queue.pipeline(`matmul direct|${t}|${rb}|${vecA}|${vecB}|${vecOut}|${R}|${C}`, () =>
      directSource(t, rb, vecA, vecB, vecOut, R, C),
    );
    const [y, z] = grid(Math.ceil(M / R) * batches);
    for (const params of passes)
      queue.dispatch(label, pipeline, bindings, params, [Math.ceil(N / (DIRECT_LANES * C)), y, z]);
    return;
  }
  const pipeline = queue.pipeline(`matmul|${t}|${rb}|${vecA}|${vecB}`, () => tiledSource(t, rb, vecA, vecB));
  const [y, z] = grid(Math.ceil(M / TM) * batches);
  for (const params of passes) queue.dispatch(label, pipeline, bindings, params, [Math.ceil(N / TN), y, z]);
}

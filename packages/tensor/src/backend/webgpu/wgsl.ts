/**
 * Pieces of WGSL every kernel shares: storage types per dtype, the parameter block, the linear workgroup id,
 * and strided addressing. Shapes and strides always travel in the parameter block, so one pipeline per
 * (kernel, dtypes, rank) serves every shape.
 */
import { type DType, isHalf } from '../../dtype.js';
import type { View } from '../backend.js';
import { WGSL_INDEX } from '../../kernel-ir/render-wgsl.js';
import { renderOffsetWalk } from '../../kernel-ir/walk.js';
import { checkDtype } from './buffers.js';

/**
 * The WGSL element type a dtype is stored as: bool as u32 0/1; float16 and bfloat16 two to a u32 word
 * (gpuBytes in buffers.ts), read with halfAt and written with storeHalf.
 */
export function storageType(dtype: DType): 'f32' | 'i32' | 'u32' {
  checkDtype('kernel', dtype);
  return dtype === 'float32' ? 'f32' : dtype === 'int32' ? 'i32' : 'u32';
}

/** The parameter block (up to 64 words) and typed accessors: pu(i), pi(i), pf(i). */
export const PARAMS = /* wgsl */ `
struct Params { w: array<vec4<u32>, 16> }
@group(0) @binding(0) var<uniform> params: Params;
fn pu(i: u32) -> u32 { return params.w[i >> 2u][i & 3u]; }
fn pi(i: u32) -> i32 { return bitcast<i32>(pu(i)); }
fn pf(i: u32) -> f32 { return bitcast<f32>(pu(i)); }
`;

/**
 * The storage binding `binding` named `name` holding `dtype` elements. A written half buffer is atomic: two
 * threads may store the two halves of one word at once (storeHalf).
 */
export function buffer(binding: number, name: string, dtype: DType, write = false): string {
  const access = write ? 'read_write' : 'read';
  const element = write && isHalf(dtype) ? 'atomic<u32>' : storageType(dtype);
  return `@group(0) @binding(${binding}) var<storage, ${access}> ${name}: array<${element}>;`;
}

/** WGSL reading the half element at index `i` (a u32 expression) of packed buffer `name`: its 16 bits. */
export function halfAt(name: string, i: string): string {
  return `((${name}[(${i}) >> 1u] >> (((${i}) & 1u) << 4u)) & 0xffffu)`;
}

/**
 * WGSL statements storing the 16 bits `bits` as element `i` of the atomic half buffer `name`: clear its half
 * of the word, then set it. Each touches only its own 16 bits, so stores to the word's other half, at the
 * same time from another thread, are kept.
 */
export function storeHalf(name: string, i: string, bits: string): string {
  return `{ let hi = ${i}; let shift = (hi & 1u) << 4u;
    atomicAnd(&${name}[hi >> 1u], ~(0xffffu << shift));
    atomicOr(&${name}[hi >> 1u], ((${bits}) & 0xffffu) << shift); }`;
}

/** Linear workgroup index across a 2-D grid (see grid() in queue.ts). */
export const LINEAR_GROUP = 'let group = wid.x + wid.y * nwg.x;';
export const GROUP_BUILTINS =
  '@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>';

/**
 * float16 and bfloat16 bits to and from f32, rounding to nearest even, in integer arithmetic (as src/half.ts;
 * WGSL's pack2x16float leaves the rounding to the implementation, and bfloat16 has no builtin).
 */
export const HALF = /* wgsl */ `fn bfloat16_to_f32(h: u32) -> f32 { return bitcast<f32>(h << 16u); }
fn f32_to_bfloat16(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return (b >> 16u) | 0x40u; }
  return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}
fn float16_to_f32(h: u32) -> f32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) { let v = f32(m) * 5.9604644775390625e-8; return select(v, -v, sign != 0u); }
  if (e == 31u) { return bitcast<f32>(sign | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}
fn f32_to_float16(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  let sign = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) { return sign | select(0x7c00u, 0x7e00u, a > 0x7f800000u); }
  if (a >= 0x477ff000u) { return sign | 0x7c00u; }
  if (a < 0x38800000u) {
    if (a < 0x33000000u) { return sign; }
    let shift = 126u - (a >> 23u);
    let m = (a & 0x7fffffu) | 0x800000u;
    var q = m >> shift;
    let r = m & ((1u << shift) - 1u);
    let halfway = 1u << (shift - 1u);
    if (r > halfway || (r == halfway && (q & 1u) == 1u)) { q = q + 1u; }
    return sign | q;
  }
  var h = (((a >> 23u) - 112u) << 10u) | ((a >> 13u) & 0x3ffu);
  let d = a & 0x1fffu;
  if (d > 0x1000u || (d == 0x1000u && (h & 1u) == 1u)) { h = h + 1u; }
  return sign | h;
}`;

/**
 * WGSL that turns linear index `i` into the storage offsets of `count` operands, for a walk of rank `rank`
 * (kernel-ir/walk.ts). Parameter layout from word `base`: shape[rank], then for each operand offset then
 * strides[rank]. Defines `offsets_of(i: u32) -> array<u32, count>`.
 */
export function stridedOffsets(rank: number, count: number, base: number): string {
  const startAt = (k: number) => base + rank + k * (rank + 1);
  const offsets = Array.from({ length: count }, (_, k) => `o${k}`);
  const walk = renderOffsetWalk(
    {
      rank,
      index: 'linear',
      extent: (d) => `pu(${base + d}u)`,
      offsets,
      stride: (k, d) => `pi(${startAt(k) + 1 + d}u)`,
    },
    WGSL_INDEX,
  );
  return [
    `fn offsets_of(linear: u32) -> array<u32, ${count}> {`,
    ...offsets.map((o, k) => `  var ${o} = pi(${startAt(k)}u);`),
    ...walk.map((line) => `  ${line}`),
    `  return array<u32, ${count}>(${offsets.map((o) => `u32(${o})`).join(', ')});`,
    '}',
  ].join('\n');
}

/** Parameter words for stridedOffsets: shape, then each view's offset and strides along the merged walk. */
export function stridedWords(
  shape: readonly number[],
  offsets: readonly number[],
  strides: readonly number[][],
): number[] {
  const words: number[] = [...shape];
  offsets.forEach((o, k) => {
    words.push(o, ...strides[k]);
  });
  return words;
}

export function viewLabel(v: View): string {
  return `${v.dtype}[${v.shape.join(',')}]`;
}

export function sizeOfShape(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * Pieces of WGSL every kernel shares: storage types per dtype, the parameter block, the linear workgroup id,
 * and strided addressing. Shapes and strides always travel in the parameter block, so one pipeline per
 * (kernel, dtypes, rank) serves every shape.
 */
import type { DType } from '../../dtype.js';
import type { View } from '../backend.js';
import { checkDtype } from './buffers.js';

/** The WGSL element type a dtype is stored as (bool as u32 0/1). */
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

/** The storage binding `binding` named `name` holding `dtype` elements. */
export function buffer(binding: number, name: string, dtype: DType, write = false): string {
  const access = write ? 'read_write' : 'read';
  return `@group(0) @binding(${binding}) var<storage, ${access}> ${name}: array<${storageType(dtype)}>;`;
}

/** Linear workgroup index across a 2-D grid (see grid() in queue.ts). */
export const LINEAR_GROUP = 'let group = wid.x + wid.y * nwg.x;';
export const GROUP_BUILTINS =
  '@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>';

/** ±Infinity at run time (WGSL rejects non-finite constant expressions, so go through a variable). */
export const INF = /* wgsl */ `fn neg_inf() -> f32 { var bits = 0xff800000u; return bitcast<f32>(bits); }
fn pos_inf() -> f32 { var bits = 0x7f800000u; return bitcast<f32>(bits); }
fn nan_f() -> f32 { var bits = 0x7fc00000u; return bitcast<f32>(bits); }`;

/** Float test for NaN that no fast-math pass can fold away. */
export const IS_NAN = 'fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }';

/**
 * Merges adjacent axes that every operand walks contiguously (stride[i] = stride[i+1]·shape[i+1]) and drops
 * size-1 axes, so a dense elementwise op becomes rank 1 and broadcasting ops keep only the axes they need.
 */
export function collapse(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
): { shape: number[]; strides: number[][] } {
  const outShape: number[] = [];
  const outStrides: number[][] = strides.map(() => []);
  for (let i = 0; i < shape.length; i++) {
    if (shape[i] === 1) continue;
    const last = outShape.length - 1;
    if (last >= 0 && strides.every((s, k) => outStrides[k][last] === s[i] * shape[i])) {
      outShape[last] *= shape[i];
      strides.forEach((s, k) => {
        outStrides[k][last] = s[i];
      });
    } else {
      outShape.push(shape[i]);
      strides.forEach((s, k) => {
        outStrides[k].push(s[i]);
      });
    }
  }
  return { shape: outShape, strides: outStrides };
}

/**
 * WGSL that turns linear index `i` into the storage offsets of `count` operands, for a walk of rank `rank`.
 * Parameter layout from word `base`: shape[rank], then for each operand offset then strides[rank].
 * Defines `offsets_of(i: u32) -> array<u32, count>`.
 */
export function stridedOffsets(rank: number, count: number, base: number): string {
  const lines: string[] = [];
  lines.push(`fn offsets_of(linear: u32) -> array<u32, ${count}> {`);
  lines.push(`  var o: array<u32, ${count}>;`);
  for (let k = 0; k < count; k++) lines.push(`  o[${k}] = pu(${base + rank + k * (rank + 1)}u);`);
  if (rank > 0) {
    lines.push('  var rest = linear;');
    for (let d = rank - 1; d >= 0; d--) {
      lines.push(`  { let dim = pu(${base + d}u); let c = rest % dim; rest = rest / dim;`);
      for (let k = 0; k < count; k++)
        lines.push(
          `    o[${k}] = u32(i32(o[${k}]) + i32(c) * pi(${base + rank + k * (rank + 1) + 1 + d}u));`,
        );
      lines.push('  }');
    }
  }
  lines.push('  return o;');
  lines.push('}');
  return lines.join('\n');
}

/** Parameter words for stridedOffsets: shape, then each view's offset and strides along the collapsed walk. */
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

/// <reference types="@webgpu/types" preserve="true" />
/**
 * What the attention kernels share: the shape and tile sizes, the parameter block, passes over keys (or rows)
 * that keep each invocation under llvmpipe's loop limit, and the WGSL for the causal/mask test.
 */
import {
  type AttentionArgs,
  type AttentionBackwardArgs,
  type AttentionDims,
  type View,
  attentionDims,
} from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { type Binding, type GpuQueue, Params, grid } from '../queue.js';
import { INF } from '../../../kernel-ir/render-wgsl.js';
import { PARAMS, buffer } from '../wgsl.js';

export const ROWS = 64;

export interface Shape extends AttentionDims {
  DM: number;
  /** Keys (or query rows) per staged tile: two tiles of TILE×DM floats stay within 16 KiB. */
  TILE: number;
}

export function shapeOf(args: AttentionArgs | AttentionBackwardArgs): Shape {
  const dims = attentionDims(args);
  const { D } = dims;
  if (D > 256) throw new Error(`webgpu attention: head size ${D} exceeds 256 (q [${args.q.shape}])`);
  for (const [what, v] of Object.entries({ q: args.q, k: args.k, v: args.v }))
    if (v.dtype !== 'float32') throw new Error(`webgpu attention: ${what} must be float32, got ${v.dtype}`);
  const DM = Math.max(16, 2 ** Math.ceil(Math.log2(Math.max(1, D))));
  return { ...dims, DM, TILE: Math.max(4, Math.min(32, 1024 / DM)) };
}

/**
 * Words: B, H, Hkv, T, S, D, scale, causal, hasMask, q, k, v offsets, mask offset + 4 strides (12..16),
 * out, lse, dout offsets (17..19), then this pass's chunk: begin, end, first, last (20..23).
 */
export function params(
  args: AttentionArgs | AttentionBackwardArgs,
  s: Shape,
  outOffsets: [number, number, number],
  chunk: Chunk,
): Params {
  const m = args.mask;
  return (
    new Params()
      .u32(s.B, s.H, s.Hkv, s.T, s.S, s.D)
      .f32s(args.scale)
      .u32(args.causal ? 1 : 0, m ? 1 : 0, args.q.offset, args.k.offset, args.v.offset)
      .i32s(m ? m.offset : 0, ...(m ? m.strides : [0, 0, 0, 0]))
      .u32(...outOffsets, chunk.begin, chunk.end, chunk.first ? 1 : 0, chunk.last ? 1 : 0)
      // Words 24–27: K's and V's batch and head strides (a KV cache's view is read in place).
      .u32(args.k.strides[0], args.k.strides[1], args.v.strides[0], args.v.strides[1])
  );
}

export interface Chunk {
  begin: number;
  end: number;
  first: boolean;
  last: boolean;
}

/** Key·dim units one invocation handles per dispatch (see the note at the top). */
export const UNITS_PER_PASS = 8192;

/** Splits [0, n) into passes of whole tiles, each within the per-invocation budget (`width` units per item). */
export function chunks(n: number, width: number, tile: number): Chunk[] {
  const size = Math.max(tile, Math.floor(UNITS_PER_PASS / width / tile) * tile);
  const out: Chunk[] = [];
  for (let begin = 0; begin < n || out.length === 0; begin += size)
    out.push({ begin, end: Math.min(n, begin + size), first: begin === 0, last: begin + size >= n });
  return out;
}

/** WGSL: where the [S, D] rows of K (`which` 0) or V (1) for batch b, K/V head hk start, in elements. */
export function headBase(which: 0 | 1, b: string, hk: string): string {
  const [offset, strides] = which === 0 ? ['10u', ['24u', '25u']] : ['11u', ['26u', '27u']];
  return `pu(${offset}) + ${b} * pu(${strides[0]}) + ${hk} * pu(${strides[1]})`;
}

/** Common WGSL: parameter names and the allowed(i, j) test (causal bottom-right alignment, optional mask). */
export function common(s: Shape, hasMask: boolean): string {
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

export function maskDecl(binding: number, hasMask: boolean): string {
  return hasMask ? buffer(binding, 'mask', 'bool') : '';
}

export function bindingsOf(views: (View | null)[], writes: number[] = []): Binding[] {
  const out: Binding[] = [];
  views.forEach((v, k) => {
    if (v) out.push({ storage: v.storage as GpuStorage, write: writes.includes(k) });
  });
  return out;
}

/**
 * Runs a forward kernel over the keys in passes (see chunks), `keysPerStep` keys at a time, one workgroup per
 * `rowsPerGroup` query rows of each (batch, head). Between passes the running max and output live in out and
 * lse, the running denominator in a scratch buffer bound after them (binding 6), then the mask.
 */
export function dispatchForward(
  queue: GpuQueue,
  args: AttentionArgs,
  s: Shape,
  pipeline: GPUComputePipeline,
  keysPerStep: number,
  rowsPerGroup: number,
): void {
  const lsum = queue.pool.acquire('float32', s.B * s.H * s.T);
  try {
    for (const chunk of chunks(s.S, s.DM, keysPerStep)) {
      queue.dispatch(
        `attention q[${args.q.shape}] k[${args.k.shape}] keys ${chunk.begin}..${chunk.end}`,
        pipeline,
        [
          ...bindingsOf([args.q, args.k, args.v, args.out, args.lse], [3, 4]),
          { storage: lsum, write: true },
          ...bindingsOf([args.mask]),
        ],
        params(args, s, [0, 0, 0], chunk),
        grid(s.B * s.H * Math.ceil(s.T / rowsPerGroup)),
      );
    }
  } finally {
    queue.release(lsum);
  }
}

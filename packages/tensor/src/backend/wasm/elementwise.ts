/**
 * Elementwise ops on the wasm kernels (./emit/elementwise.ts), for float32 views of the layouts they cover:
 * binary add/sub/mul/div with both inputs dense, or one dense and the other broadcast along every axis but
 * the last (a bias: strides 0, …, 0, 1) or along all axes (a scalar); the unary ops of UNARY_KERNEL_OPS
 * (emit/elementwise.ts) on a dense input. Everything else, and inputs too small to repay the copies in and
 * out, go to the CPU kernels.
 */
import { sizeOf } from '../../shape.js';
import type { BinaryOp, UnaryOp, View } from '../backend.js';
import { binary as cpuBinary, unary as cpuUnary } from '../cpu/elementwise.js';
import { dataOf } from '../cpu/storage.js';
import { isDense } from '../cpu/strided.js';
import {
  type BinaryKernelOp,
  type BinaryKind,
  UNARY_KERNEL_OPS,
  type UnaryKernelOp,
  binaryName,
  unaryName,
} from './emit/elementwise.js';
import { type Stream, runRows } from './rows.js';
import { getWasmRuntime } from './runtime.js';

/** Below this many elements the TypeScript loop is as fast as copying into wasm memory and back. */
export const MIN_ELEMENTWISE = 4096;
/** Rows of this many elements when a dense array is cut into chunks. */
const FLAT_WIDTH = 1024;

const f32 = (v: View) => dataOf(v) as Float32Array;

/** How `v` broadcasts over `shape`: dense, one row along the last axis, a scalar, or none of these. */
function kindOf(v: View, shape: readonly number[]): BinaryKind | undefined {
  if (isDense(v)) return 'dense';
  const r = shape.length;
  if (v.strides.every((s, i) => s === 0 || shape[i] === 1)) return 'scalar';
  if (
    r >= 1 &&
    v.strides.every((s, i) => (i === r - 1 ? s === 1 || shape[i] === 1 : s === 0 || shape[i] === 1))
  )
    return 'row';
  return undefined;
}

const SWAPPED: Record<string, BinaryKernelOp> = { add: 'add', mul: 'mul', sub: 'rsub', div: 'rdiv' };

export function binary(op: BinaryOp, a: View, b: View, out: View): void {
  const n = sizeOf(out.shape);
  if (
    !(op === 'add' || op === 'sub' || op === 'mul' || op === 'div') ||
    a.dtype !== 'float32' ||
    b.dtype !== 'float32' ||
    out.dtype !== 'float32' ||
    n < MIN_ELEMENTWISE ||
    !isDense(out)
  ) {
    cpuBinary(op, a, b, out);
    return;
  }
  let ka = kindOf(a, out.shape);
  let kb = kindOf(b, out.shape);
  let kop: BinaryKernelOp = op;
  let [x, y] = [a, b];
  if (ka !== 'dense' && kb === 'dense') {
    // The broadcast operand goes second; sub and div become their reversed forms.
    [x, y] = [b, a];
    [ka, kb] = [kb, ka];
    kop = SWAPPED[op];
  }
  if (ka !== 'dense' || kb === undefined) {
    cpuBinary(op, a, b, out);
    return;
  }
  const inner = out.shape.length === 0 ? 1 : out.shape[out.shape.length - 1];
  const width = kb === 'row' ? inner : FLAT_WIDTH;
  const rows = Math.floor(n / width);
  const id = getWasmRuntime().id(binaryName(kop, kb));
  const yv = kb === 'dense' ? null : f32(y).subarray(y.offset, y.offset + (kb === 'row' ? inner : 1));
  const run = (count: number, start: number, w: number) =>
    runRows({
      kernel: `binary ${op}`,
      rows: count,
      statics: yv ? [yv] : [],
      inputs: [
        { data: f32(x), offset: x.offset + start, width: w },
        ...(yv ? [] : [{ data: f32(y), offset: y.offset + start, width: w }]),
      ],
      outputs: [{ data: f32(out), offset: out.offset + start, width: w }],
      workPerRow: w,
      call: ({ ins, outs, statics }, c) => [id, ins[0], yv ? statics[0] : ins[1], outs[0], c, w],
    });
  run(rows, 0, width);
  // A dense array whose size is not a multiple of FLAT_WIDTH: the tail as one short row.
  if (rows * width < n) run(1, rows * width, n - rows * width);
}

const UNARY_SET = new Set<string>(UNARY_KERNEL_OPS);

export function unary(op: UnaryOp, x: View, out: View): void {
  const n = sizeOf(out.shape);
  if (
    !UNARY_SET.has(op) ||
    x.dtype !== 'float32' ||
    out.dtype !== 'float32' ||
    n < MIN_ELEMENTWISE ||
    !isDense(x) ||
    !isDense(out)
  ) {
    cpuUnary(op, x, out);
    return;
  }
  const id = getWasmRuntime().id(unaryName(op as UnaryKernelOp));
  const rows = Math.floor(n / FLAT_WIDTH);
  const run = (count: number, start: number, w: number) => {
    const input: Stream = { data: f32(x), offset: x.offset + start, width: w };
    runRows({
      kernel: `unary ${op}`,
      rows: count,
      inputs: [input],
      outputs: [{ data: f32(out), offset: out.offset + start, width: w }],
      workPerRow: 8 * w,
      call: ({ ins, outs }, c) => [id, ins[0], outs[0], c * w],
    });
  };
  run(rows, 0, FLAT_WIDTH);
  if (rows * FLAT_WIDTH < n) run(1, rows * FLAT_WIDTH, n - rows * FLAT_WIDTH);
}

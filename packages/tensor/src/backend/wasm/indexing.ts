/**
 * Gather and scatter-add along the last axis on the wasm kernels (./emit/indexing.ts), rows split over the
 * threads: the copy head reads a vocabulary row at a context's token ids, and scatters back, over every
 * position of a batch, and the TypeScript loops over those reads were an eighth of a training step, on
 * one thread. The fast path takes float32 values, dense views, and an index whose rows are x's rows (the
 * same leading shape); anything else, and small calls, take the TypeScript kernels (the same bits).
 */
import { sizeOf } from '../../shape.js';
import type { View } from '../backend.js';
import { checkIndex, gather as cpuGather, scatterAdd as cpuScatterAdd } from '../cpu/indexing.js';
import { dataOf } from '../cpu/storage.js';
import { isDense } from '../cpu/strided.js';
import { MIN_ELEMENTWISE } from './elementwise.js';
import { runRows } from './rows.js';
import { getWasmRuntime } from './runtime.js';

const f32 = (v: View) => dataOf(v) as Float32Array;

/** The int32 index's storage read as float32 lanes, so that the row driver copies its bits into wasm. */
const idsAsF32 = (v: View) => {
  const ids = dataOf(v) as Int32Array;
  return new Float32Array(ids.buffer, ids.byteOffset, ids.length);
};

/** Whether the call is one the wasm kernel takes: last axis, float32, dense, rows matching, not small. */
function fits(values: View, dim: number, index: View, other: View): boolean {
  const last = values.shape.length - 1;
  return (
    dim === last &&
    values.dtype === 'float32' &&
    other.dtype === 'float32' &&
    index.dtype === 'int32' &&
    index.shape.every((s, i) => i === last || s === values.shape[i]) &&
    [values, index, other].every(isDense) &&
    sizeOf(index.shape) >= MIN_ELEMENTWISE
  );
}

/** Runs `kernel` over the rows; throws as the TypeScript kernel does if a row flagged an id out of range. */
function run(kernel: 'gather' | 'scatterAdd', values: View, index: View, other: View): void {
  const last = values.shape.length - 1;
  const size = values.shape[last];
  const width = index.shape[last];
  const rows = width === 0 ? 0 : sizeOf(index.shape) / width;
  if (rows === 0) return;
  const id = getWasmRuntime().id(kernel);
  const valuesStream = { data: f32(values), offset: values.offset, width: size };
  const indexStream = { data: idsAsF32(index), offset: index.offset, width };
  const otherStream = { data: f32(other), offset: other.offset, width };
  const { mem, statics } = runRows({
    kernel,
    rows,
    // One flag per row, set where the row holds an id out of range.
    statics: [rows],
    inputs: kernel === 'gather' ? [valuesStream, indexStream] : [valuesStream, indexStream, otherStream],
    outputs: kernel === 'gather' ? [otherStream] : [{ ...valuesStream, inPlaceOf: 0 }],
    workPerRow: 2 * width,
    call: ({ ins, outs, statics: at }, count, row) => [
      id,
      ins[0],
      ins[1],
      kernel === 'gather' ? outs[0] : ins[2],
      count,
      size,
      width,
      at[0] + 4 * row,
    ],
  });
  if (new Int32Array(mem.buffer, statics[0], rows).some((flag) => flag !== 0)) {
    // The first bad id, for the TypeScript kernel's error.
    const ids = dataOf(index).subarray(index.offset, index.offset + rows * width);
    for (const bad of ids) checkIndex(kernel, bad, size, last);
  }
}

export function gather(x: View, dim: number, index: View, out: View): void {
  if (fits(x, dim, index, out)) run('gather', x, index, out);
  else cpuGather(x, dim, index, out);
}

export function scatterAdd(dst: View, dim: number, index: View, src: View): void {
  if (fits(dst, dim, index, src)) run('scatterAdd', dst, index, src);
  else cpuScatterAdd(dst, dim, index, src);
}

/**
 * The driver shared by every row-wise kernel (softmax, norms, elementwise, AdamW): rows of dense f32
 * streams that live on the JS heap are copied into the wasm memory a chunk at a time (about 256 KB per
 * thread, so a chunk is still in cache when the kernel reads it and when its results are copied out), each
 * chunk's rows are split over the threads, and the outputs copied back; streams already in the wasm memory
 * are used in place. Rows are the unit of work: a kernel computes every row the same
 * way whichever thread runs it and however the rows were chunked, so results never depend on the thread
 * count.
 */
import type { Call } from './pool.js';
import { type WasmRuntime, getWasmRuntime } from './runtime.js';

/** `width` f32 values per row from `data`, starting at element `offset`. */
export interface Stream {
  data: Float32Array;
  offset: number;
  width: number;
}

/** An output stream, or one copied back from an input's region that the kernel updated in place. */
export type OutStream = Stream & { inPlaceOf?: number };

export interface RowJob {
  kernel: string;
  rows: number;
  /** Copied in once before the rows (a weight, a bias); a number reserves that many zeroed floats. */
  statics?: (Float32Array | number)[];
  inputs: Stream[];
  outputs: OutStream[];
  /** Elementary operations per row, to decide whether threads pay off. */
  workPerRow: number;
  /** Calls start at multiples of this many rows (global row index), e.g. for fixed partial sums. */
  align?: number;
  /** The call for `count` rows starting at global row `row`, given the byte addresses of that row. */
  call(at: { ins: number[]; outs: number[]; statics: number[] }, count: number, row: number): Call;
}

const CHUNK_BYTES = 1 << 18;
const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

/**
 * Runs the job; returns the memory view and the statics' byte addresses (to read partial sums back).
 * Streams whose data lives in the wasm memory (./arena.ts) are read and written where they are; the others
 * are copied through the scratch block a chunk at a time.
 */
export function runRows(job: RowJob): { mem: Float32Array; statics: number[] } {
  const rt: WasmRuntime = getWasmRuntime();
  const align = job.align ?? 1;
  const lanes = rt.lanes(job.rows * job.workPerRow);
  const nIn = job.inputs.length;
  const inAt = job.inputs.map((s) => rt.addressOf(s.data));
  // An in-place output shares its input's place; another output is resident or copied out.
  const outAt = job.outputs.map((o) => (o.inPlaceOf === undefined ? rt.addressOf(o.data) : undefined));
  const copied = [
    ...job.inputs.map((s, k) => (inAt[k] === undefined ? s.width : 0)),
    ...job.outputs.map((o, k) => (o.inPlaceOf === undefined && outAt[k] === undefined ? o.width : 0)),
  ];
  const bytesPerRow = 4 * copied.reduce((a, b) => a + b, 0);
  let chunk =
    bytesPerRow === 0 ? job.rows : Math.max(1, Math.floor((CHUNK_BYTES * lanes) / Math.max(4, bytesPerRow)));
  chunk = Math.min(Math.ceil(chunk / align) * align, Math.ceil(job.rows / align) * align);
  // Scratch layout: the statics, then a chunk's region for each copied stream.
  const offsets: number[] = [];
  let top = 0;
  const staticOffsets = (job.statics ?? []).map((st) => {
    const at = top;
    top = align16(top + 4 * (typeof st === 'number' ? st : st.length));
    return at;
  });
  for (const w of copied) {
    offsets.push(top);
    top = align16(top + 4 * w * Math.max(chunk, 1));
  }
  const { base, mem: scratchView } = rt.scratch(Math.max(top, 16));
  let mem = scratchView;
  const staticAt = staticOffsets.map((o) => base + o);
  (job.statics ?? []).forEach((st, i) => {
    if (typeof st === 'number') mem.fill(0, staticAt[i] / 4, staticAt[i] / 4 + st);
    else mem.set(st, staticAt[i] / 4);
  });
  // The byte address of row r0 of each stream: in place for resident ones, else its scratch region.
  const inputAt = (k: number, r0: number) => {
    const s = job.inputs[k];
    const at = inAt[k];
    return at === undefined ? base + offsets[k] : at + 4 * (s.offset + r0 * s.width);
  };
  const outputAt = (k: number, r0: number) => {
    const o = job.outputs[k];
    if (o.inPlaceOf !== undefined) return inputAt(o.inPlaceOf, r0);
    const at = outAt[k];
    return at === undefined ? base + offsets[nIn + k] : at + 4 * (o.offset + r0 * o.width);
  };
  for (let r0 = 0; r0 < job.rows; r0 += chunk) {
    const n = Math.min(chunk, job.rows - r0);
    job.inputs.forEach((s, k) => {
      if (inAt[k] !== undefined) return;
      const from = s.offset + r0 * s.width;
      mem.set(s.data.subarray(from, from + n * s.width), (base + offsets[k]) / 4);
    });
    const ins = job.inputs.map((_, k) => inputAt(k, r0));
    const outs = job.outputs.map((_, k) => outputAt(k, r0));
    const calls: Call[] = [];
    const pieces = Math.min(lanes, Math.ceil(n / align));
    for (let p = 0; p < pieces; p++) {
      const a = Math.floor((p * n) / pieces / align) * align;
      const b = p + 1 === pieces ? n : Math.floor(((p + 1) * n) / pieces / align) * align;
      if (b <= a) continue;
      if (align > 1) {
        // One call per aligned group, so a group's partial sums are always made by one call.
        for (let g = a; g < b; g += align)
          calls.push(callAt(job, ins, outs, staticAt, g, Math.min(align, b - g), r0));
      } else calls.push(callAt(job, ins, outs, staticAt, a, b - a, r0));
    }
    rt.parallel(job.kernel, calls, lanes);
    mem = rt.view();
    job.outputs.forEach((o, k) => {
      const copiedBack = o.inPlaceOf === undefined ? outAt[k] === undefined : inAt[o.inPlaceOf] === undefined;
      if (!copiedBack) return;
      const from = outs[k] / 4;
      o.data.set(mem.subarray(from, from + n * o.width), o.offset + r0 * o.width);
    });
  }
  return { mem, statics: staticAt };
}

/** The call for rows [local, local + count) of the chunk at r0, given the chunk's stream addresses. */
function callAt(
  job: RowJob,
  ins: number[],
  outs: number[],
  statics: number[],
  local: number,
  count: number,
  r0: number,
): Call {
  const inRows = job.inputs.map((s, k) => ins[k] + 4 * local * s.width);
  const outRows = job.outputs.map((s, k) => outs[k] + 4 * local * s.width);
  return job.call({ ins: inRows, outs: outRows, statics }, count, r0 + local);
}

/**
 * The driver shared by every row-wise kernel (softmax, norms, elementwise, AdamW): rows of dense f32
 * streams are copied into the wasm memory a chunk at a time (about 256 KB per thread, so a chunk is still in
 * cache when the kernel reads it and when its results are copied out), each chunk's rows are split over
 * the threads, and the outputs copied back. Rows are the unit of work: a kernel computes every row the same
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

/** Runs the job; returns the memory view and the statics' byte addresses (to read partial sums back). */
export function runRows(job: RowJob): { mem: Float32Array; statics: number[] } {
  const rt: WasmRuntime = getWasmRuntime();
  const align = job.align ?? 1;
  const lanes = rt.lanes(job.rows * job.workPerRow);
  const staticAt: number[] = [];
  let top = 0;
  for (const s of job.statics ?? []) {
    staticAt.push(top);
    top = align16(top + 4 * (typeof s === 'number' ? s : s.length));
  }
  const widths = [...job.inputs, ...job.outputs.filter((o) => o.inPlaceOf === undefined)].map((s) => s.width);
  const bytesPerRow = 4 * widths.reduce((a, b) => a + b, 0);
  let chunk = Math.max(1, Math.floor((CHUNK_BYTES * lanes) / Math.max(4, bytesPerRow)));
  chunk = Math.min(Math.ceil(chunk / align) * align, Math.ceil(job.rows / align) * align);
  const regionAt: number[] = [];
  for (const w of widths) {
    regionAt.push(top);
    top = align16(top + 4 * w * chunk);
  }
  let mem = rt.reserve(Math.max(top, 16));
  (job.statics ?? []).forEach((s, i) => {
    if (typeof s === 'number') mem.fill(0, staticAt[i] / 4, staticAt[i] / 4 + s);
    else mem.set(s, staticAt[i] / 4);
  });
  const nIn = job.inputs.length;
  const outRegion = (k: number) => {
    const o = job.outputs[k];
    if (o.inPlaceOf !== undefined) return regionAt[o.inPlaceOf];
    let slot = nIn;
    for (let j = 0; j < k; j++) if (job.outputs[j].inPlaceOf === undefined) slot++;
    return regionAt[slot];
  };
  const outAt = job.outputs.map((_, k) => outRegion(k));
  for (let r0 = 0; r0 < job.rows; r0 += chunk) {
    const n = Math.min(chunk, job.rows - r0);
    job.inputs.forEach((s, k) => {
      const from = s.offset + r0 * s.width;
      mem.set(s.data.subarray(from, from + n * s.width), regionAt[k] / 4);
    });
    const calls: Call[] = [];
    const pieces = Math.min(lanes, Math.ceil(n / align));
    for (let p = 0; p < pieces; p++) {
      const a = Math.floor((p * n) / pieces / align) * align;
      const b = p + 1 === pieces ? n : Math.floor(((p + 1) * n) / pieces / align) * align;
      if (b <= a) continue;
      if (align > 1) {
        // One call per aligned group, so a group's partial sums are always made by one call.
        for (let g = a; g < b; g += align)
          calls.push(callAt(job, regionAt, outAt, staticAt, g, Math.min(align, b - g), r0));
      } else calls.push(callAt(job, regionAt, outAt, staticAt, a, b - a, r0));
    }
    rt.parallel(job.kernel, calls);
    mem = rt.reserve(0);
    job.outputs.forEach((s, k) => {
      const base = outAt[k] / 4;
      s.data.set(mem.subarray(base, base + n * s.width), s.offset + r0 * s.width);
    });
  }
  return { mem, statics: staticAt };
}

function callAt(
  job: RowJob,
  regionAt: number[],
  outAt: number[],
  statics: number[],
  local: number,
  count: number,
  r0: number,
): Call {
  const ins = job.inputs.map((s, k) => regionAt[k] + 4 * local * s.width);
  const outs = job.outputs.map((s, k) => outAt[k] + 4 * local * s.width);
  return job.call({ ins, outs, statics }, count, r0 + local);
}

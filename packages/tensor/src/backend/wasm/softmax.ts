/**
 * Softmax, log-softmax and the fused logprobs forward on the WebAssembly SIMD kernel. Rows are processed in
 * chunks of about 128 KB, copied into the wasm memory, transformed in place, and copied out, so a chunk
 * stays in cache across the kernel's three passes. Other dtypes fall back to the CPU kernels.
 */
import type { View } from '../backend.js';
import { logprobs as cpuLogprobs, softmax as cpuSoftmax } from '../cpu/softmax.js';
import { dataOf } from '../cpu/storage.js';
import { assertDense } from '../cpu/strided.js';
import { getWasmRuntime } from './runtime.js';

const CHUNK_FLOATS = 32768;

function rowsOf(v: View): [rows: number, width: number] {
  const width = v.shape.length === 0 ? 1 : v.shape[v.shape.length - 1];
  const size = v.shape.reduce((x, y) => x * y, 1);
  return [width === 0 ? 0 : size / width, width];
}

export function softmax(x: View, out: View, log: boolean): void {
  if (x.dtype !== 'float32' || out.dtype !== 'float32') {
    cpuSoftmax(x, out, log);
    return;
  }
  assertDense('softmax', x);
  const xs = dataOf(x) as Float32Array;
  const o = dataOf(out) as Float32Array;
  const [rows, width] = rowsOf(x);
  if (rows === 0) return;
  const chunk = Math.max(1, Math.floor(CHUNK_FLOATS / width));
  const rt = getWasmRuntime();
  const mem = rt.reserve(4 * Math.min(chunk, rows) * width);
  for (let r0 = 0; r0 < rows; r0 += chunk) {
    const n = Math.min(chunk, rows - r0);
    const start = x.offset + r0 * width;
    mem.set(xs.subarray(start, start + n * width), 0);
    rt.softmax(0, 0, n, width, log ? 1 : 0);
    o.set(mem.subarray(0, n * width), out.offset + r0 * width);
  }
}

/** out[n] = logits[n, targets[n]] - lse[n], with the log-sum-exp of each row from the kernel's mode 2. */
export function logprobs(logits: View, targets: View, out: View, lse: View): void {
  if (logits.dtype !== 'float32' || out.dtype !== 'float32' || lse.dtype !== 'float32') {
    cpuLogprobs(logits, targets, out, lse);
    return;
  }
  assertDense('logprobs', logits, targets);
  const xs = dataOf(logits) as Float32Array;
  const ts = dataOf(targets);
  const o = dataOf(out) as Float32Array;
  const l = dataOf(lse) as Float32Array;
  const [rows, width] = rowsOf(logits);
  for (let r = 0; r < rows; r++) {
    const t = ts[targets.offset + r];
    if (!(t >= 0 && t < width))
      throw new Error(`logprobs: target ${t} at row ${r} is out of range [0, ${width})`);
  }
  if (rows === 0) return;
  const chunk = Math.max(1, Math.floor(CHUNK_FLOATS / width));
  const rt = getWasmRuntime();
  const lseBase = Math.ceil((Math.min(chunk, rows) * width) / 4) * 4;
  const mem = rt.reserve(4 * (lseBase + Math.min(chunk, rows)));
  for (let r0 = 0; r0 < rows; r0 += chunk) {
    const n = Math.min(chunk, rows - r0);
    const start = logits.offset + r0 * width;
    mem.set(xs.subarray(start, start + n * width), 0);
    rt.softmax(0, 4 * lseBase, n, width, 2);
    for (let i = 0; i < n; i++) {
      const r = r0 + i;
      const z = mem[lseBase + i];
      l[lse.offset + r] = z;
      o[out.offset + r] = xs[start + i * width + ts[targets.offset + r]] - z;
    }
  }
}

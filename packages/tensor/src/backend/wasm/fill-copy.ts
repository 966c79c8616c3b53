/**
 * The fill and copy kernels for float32 tensors that live in the wasm memory (./arena.ts): each dense run
 * becomes one memory.fill (zeros only) or memory.copy. V8's TypedArray.fill and set on a SharedArrayBuffer
 * take a slow path (measured here: fill 4x slower than memory.fill on 16 MB, 15x on 4,096 floats; set 3x
 * slower on 64K floats), and zeros and copies run on every training step (gradient buffers, contiguous()
 * before the fused kernels, the KV cache). Other dtypes, values, layouts and arrays go to the CPU kernels.
 */
import type { View } from '../backend.js';
import { copy as cpuCopy, fill as cpuFill } from '../cpu/elementwise.js';
import { dataOf } from '../cpu/storage.js';
import { forEachRun } from '../cpu/strided.js';
import { getWasmRuntime } from './runtime.js';

/** Byte address of a float32 view's storage in the wasm memory, or undefined when it lives elsewhere. */
function addressOf(v: View): number | undefined {
  return v.dtype === 'float32' ? getWasmRuntime().addressOf(dataOf(v)) : undefined;
}

export function fill(out: View, value: number): void {
  const at = Object.is(value, 0) ? addressOf(out) : undefined;
  if (at === undefined) {
    cpuFill(out, value);
    return;
  }
  const o = dataOf(out);
  const { zero } = getWasmRuntime().fn;
  forEachRun(out.shape, [out], ([i], n, [step]) => {
    if (step === 1) zero(at + 4 * i, 4 * n);
    else for (let k = 0; k < n; k++, i += step) o[i] = 0;
  });
}

export function copy(src: View, dst: View): void {
  const from = addressOf(src);
  const to = from === undefined ? undefined : addressOf(dst);
  if (from === undefined || to === undefined) {
    cpuCopy(src, dst);
    return;
  }
  const s = dataOf(src);
  const d = dataOf(dst);
  const move = getWasmRuntime().fn.copy;
  forEachRun(src.shape, [src, dst], ([i, j], n, [si, sj]) => {
    if (si === 1 && sj === 1) move(to + 4 * j, from + 4 * i, 4 * n);
    else for (let k = 0; k < n; k++, i += si, j += sj) d[j] = s[i];
  });
}

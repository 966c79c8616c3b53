/**
 * AdamW on the wasm kernel (./emit/elementwise.ts): param, m and v are updated in place in the wasm memory
 * and copied back. In float32 throughout (the CPU kernel computes each element in float64, then rounds).
 * Other dtypes and small tensors fall back to the CPU kernel.
 */
import type { AdamWArgs, View } from '../backend.js';
import { adamw as cpuAdamw } from '../cpu/optim.js';
import { dataOf } from '../cpu/storage.js';
import { assertDense } from '../cpu/strided.js';
import { MIN_ELEMENTWISE } from './elementwise.js';
import { runRows } from './rows.js';
import { getWasmRuntime } from './runtime.js';

const WIDTH = 1024;
const f32 = (v: View) => dataOf(v) as Float32Array;

export function adamw(args: AdamWArgs): void {
  const { param, grad, m, v, lr, beta1, beta2, eps, weightDecay, step } = args;
  const n = param.shape.reduce((a, b) => a * b, 1);
  if ([param, grad, m, v].some((x) => x.dtype !== 'float32') || n < MIN_ELEMENTWISE) {
    cpuAdamw(args);
    return;
  }
  assertDense('adamw', param, grad, m, v);
  const id = getWasmRuntime().id('adamw');
  const c1 = 1 - beta1 ** step;
  const c2 = 1 - beta2 ** step;
  const run = (rows: number, start: number, w: number) =>
    runRows({
      kernel: 'adamw',
      rows,
      inputs: [param, grad, m, v].map((x) => ({ data: f32(x), offset: x.offset + start, width: w })),
      outputs: [
        { data: f32(param), offset: param.offset + start, width: w, inPlaceOf: 0 },
        { data: f32(m), offset: m.offset + start, width: w, inPlaceOf: 2 },
        { data: f32(v), offset: v.offset + start, width: w, inPlaceOf: 3 },
      ],
      workPerRow: 16 * w,
      call: ({ ins }, count) => [
        id,
        ins[0],
        ins[1],
        ins[2],
        ins[3],
        count * w,
        beta1,
        beta2,
        1 - beta1,
        1 - beta2,
        1 - lr * weightDecay,
        lr / c1,
        c2,
        eps,
      ],
    });
  const rows = Math.floor(n / WIDTH);
  run(rows, 0, WIDTH);
  if (rows * WIDTH < n) run(1, rows * WIDTH, n - rows * WIDTH);
}

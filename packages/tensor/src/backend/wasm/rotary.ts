/**
 * Rotary position embedding on the wasm kernel (./emit/rotary.ts) for float32: one row job per batch
 * element, its heads the rows and its cos/sin tables copied in once for them. Other dtypes, odd head
 * sizes and small inputs take the TypeScript kernel.
 */
import type { RotaryArgs, View } from '../backend.js';
import { rotary as cpuRotary } from '../cpu/rotary.js';
import { dataOf } from '../cpu/storage.js';
import { assertDense } from '../cpu/strided.js';
import { MIN_ELEMENTWISE } from './elementwise.js';
import { runRows } from './rows.js';
import { getWasmRuntime } from './runtime.js';

const f32 = (v: View) => dataOf(v) as Float32Array;

export function rotary(args: RotaryArgs): void {
  const { x, cos, sin, out, transpose } = args;
  const [B, H, T, D] = x.shape;
  // Small inputs (a decode step's few rows) stay on the TypeScript kernel: one job per batch element
  // would cost more than the arithmetic. Both give the same bits.
  const n = B * H * T * D;
  if ([x, cos, sin, out].some((v) => v.dtype !== 'float32') || D % 2 !== 0 || n < MIN_ELEMENTWISE) {
    cpuRotary(args);
    return;
  }
  assertDense('rotary', x, cos, sin, out);
  const id = getWasmRuntime().id('rotary');
  const block = T * D;
  for (let b = 0; b < B; b++) {
    const table = (v: View) => f32(v).subarray(v.offset + b * block, v.offset + (b + 1) * block);
    runRows({
      kernel: 'rotary',
      rows: H,
      statics: [table(cos), table(sin)],
      inputs: [{ data: f32(x), offset: x.offset + b * H * block, width: block }],
      outputs: [{ data: f32(out), offset: out.offset + b * H * block, width: block }],
      workPerRow: 3 * block,
      call: ({ ins, outs, statics }, count) => [
        id,
        ins[0],
        statics[0],
        statics[1],
        outs[0],
        count,
        T,
        D,
        transpose ? 1 : 0,
      ],
    });
  }
}

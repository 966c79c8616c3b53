/**
 * Layer norm and RMS norm, forward and backward, on the wasm row kernels (./emit/norms.ts). The backward's
 * weight and bias gradients are sums over rows: each group of GROUP rows writes its own partial sums, and the
 * partials are added here in group order, so the result does not depend on the thread count.
 * Other dtypes fall back to the CPU kernels.
 */
import type { LayerNormArgs, LayerNormBackwardArgs, View } from '../backend.js';
import {
  layerNorm as cpuLayerNorm,
  layerNormBackward as cpuLayerNormBackward,
  rmsNorm as cpuRmsNorm,
  rmsNormBackward as cpuRmsNormBackward,
} from '../cpu/norms.js';
import { dataOf } from '../cpu/storage.js';
import { assertDense } from '../cpu/strided.js';
import { runRows } from './rows.js';
import { getWasmRuntime } from './runtime.js';

const GROUP = 32;

function rows(x: View): [number, number] {
  const d = x.shape[x.shape.length - 1];
  const n = x.shape.reduce((a, b) => a * b, 1);
  return [d === 0 ? 0 : n / d, d];
}

const f32 = (v: View) => dataOf(v) as Float32Array;
const isF32 = (...views: (View | null)[]) => views.every((v) => v === null || v.dtype === 'float32');

/** The [d] values of an optional weight or bias, or `fill` where absent. */
function vector(v: View | null, d: number, fill: number): Float32Array {
  if (!v) return new Float32Array(d).fill(fill);
  return f32(v).subarray(v.offset, v.offset + d);
}

function forward(args: LayerNormArgs, centred: boolean): void {
  const { x, weight, bias, eps, out, mean, rstd } = args;
  if (!isF32(x, weight, bias, out, mean, rstd)) {
    (centred ? cpuLayerNorm : cpuRmsNorm)(args);
    return;
  }
  assertDense(centred ? 'layerNorm' : 'rmsNorm', x, weight, bias);
  const [n, d] = rows(x);
  if (n === 0 || d === 0) {
    (centred ? cpuLayerNorm : cpuRmsNorm)(args);
    return;
  }
  const id = getWasmRuntime().id('norm_fwd');
  runRows({
    kernel: centred ? 'layerNorm' : 'rmsNorm',
    rows: n,
    statics: [vector(weight, d, 1), vector(bias, d, 0)],
    inputs: [{ data: f32(x), offset: x.offset, width: d }],
    outputs: [
      { data: f32(out), offset: out.offset, width: d },
      { data: f32(mean), offset: mean.offset, width: 1 },
      { data: f32(rstd), offset: rstd.offset, width: 1 },
    ],
    workPerRow: 8 * d,
    call: ({ ins, outs, statics }, count) => [
      id,
      ins[0],
      statics[0],
      statics[1],
      outs[0],
      outs[1],
      outs[2],
      count,
      d,
      eps,
      centred ? 1 : 0,
    ],
  });
}

function backward(args: LayerNormBackwardArgs, centred: boolean): void {
  const { x, weight, mean, rstd, dy, dx, dweight, dbias } = args;
  const cpu = centred ? cpuLayerNormBackward : cpuRmsNormBackward;
  if (!isF32(x, weight, mean, rstd, dy, dx, dweight, dbias)) {
    cpu(args);
    return;
  }
  assertDense(centred ? 'layerNormBackward' : 'rmsNormBackward', x, weight, dy);
  const [n, d] = rows(x);
  if (n === 0 || d === 0) {
    cpu(args);
    return;
  }
  const groups = Math.ceil(n / GROUP);
  const id = getWasmRuntime().id('norm_bwd');
  const { mem, statics } = runRows({
    kernel: centred ? 'layerNormBackward' : 'rmsNormBackward',
    rows: n,
    statics: [vector(weight, d, 1), 2 * groups * d],
    inputs: [
      { data: f32(x), offset: x.offset, width: d },
      { data: f32(mean), offset: mean.offset, width: 1 },
      { data: f32(rstd), offset: rstd.offset, width: 1 },
      { data: f32(dy), offset: dy.offset, width: d },
    ],
    outputs: [{ data: f32(dx), offset: dx.offset, width: d }],
    workPerRow: 12 * d,
    align: GROUP,
    call: ({ ins, outs, statics: at }, count, row) => {
      const partial = at[1] + 4 * 2 * d * (row / GROUP);
      return [
        id,
        ins[0],
        at[0],
        ins[1],
        ins[2],
        ins[3],
        outs[0],
        partial,
        partial + 4 * d,
        count,
        d,
        centred ? 1 : 0,
      ];
    },
  });
  // Partial sums in group order.
  const base = statics[1] / 4;
  for (const [target, shift] of [
    [dweight, 0],
    [dbias, d],
  ] as const) {
    if (!target) continue;
    const sum = new Float64Array(d);
    for (let g = 0; g < groups; g++) {
      const row = base + 2 * d * g + shift;
      for (let j = 0; j < d; j++) sum[j] += mem[row + j];
    }
    f32(target).set(sum, target.offset);
  }
}

export const layerNorm = (args: LayerNormArgs) => forward(args, true);
export const layerNormBackward = (args: LayerNormBackwardArgs) => backward(args, true);
export const rmsNorm = (args: LayerNormArgs) => forward(args, false);
export const rmsNormBackward = (args: LayerNormBackwardArgs) => backward(args, false);

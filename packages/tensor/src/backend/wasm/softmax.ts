/**
 * Softmax, log-softmax, the fused logprobs, and their backward kernels on the wasm row kernels (./rows.ts
 * drives the chunking and threads). Other dtypes fall back to the CPU kernels.
 */
import type { View } from '../backend.js';
import {
  logprobs as cpuLogprobs,
  logprobsBackward as cpuLogprobsBackward,
  softmax as cpuSoftmax,
  softmaxBackward as cpuSoftmaxBackward,
} from '../cpu/softmax.js';
import { dataOf } from '../cpu/storage.js';
import { assertDense } from '../cpu/strided.js';
import { softmaxName } from './emit/softmax.js';
import { runRows } from './rows.js';
import { getWasmRuntime } from './runtime.js';

function rowsOf(v: View): [rows: number, width: number] {
  const width = v.shape.length === 0 ? 1 : v.shape[v.shape.length - 1];
  const size = v.shape.reduce((x, y) => x * y, 1);
  return [width === 0 ? 0 : size / width, width];
}

const f32 = (v: View) => dataOf(v) as Float32Array;
const allF32 = (...views: View[]) => views.every((v) => v.dtype === 'float32');

export function softmax(x: View, out: View, log: boolean): void {
  if (!allF32(x, out)) {
    cpuSoftmax(x, out, log);
    return;
  }
  assertDense('softmax', x);
  const [rows, width] = rowsOf(x);
  if (rows === 0) return;
  const id = getWasmRuntime().id(softmaxName(log ? 1 : 0));
  runRows({
    kernel: 'softmax',
    rows,
    inputs: [{ data: f32(x), offset: x.offset, width }],
    outputs: [{ data: f32(out), offset: out.offset, width }],
    workPerRow: 5 * width,
    call: ({ ins, outs }, count) => [id, ins[0], outs[0], count, width],
  });
}

export function softmaxBackward(y: View, dy: View, dx: View, log: boolean): void {
  if (!allF32(y, dy, dx)) {
    cpuSoftmaxBackward(y, dy, dx, log);
    return;
  }
  assertDense('softmaxBackward', y, dy);
  const [rows, width] = rowsOf(y);
  if (rows === 0) return;
  const id = getWasmRuntime().id('softmax_bwd');
  runRows({
    kernel: 'softmaxBackward',
    rows,
    inputs: [
      { data: f32(y), offset: y.offset, width },
      { data: f32(dy), offset: dy.offset, width },
    ],
    outputs: [{ data: f32(dx), offset: dx.offset, width }],
    workPerRow: 4 * width,
    call: ({ ins, outs }, count) => [id, ins[0], ins[1], outs[0], count, width, log ? 1 : 0],
  });
}

function checkTargets(ts: ArrayLike<number>, offset: number, rows: number, width: number): void {
  for (let r = 0; r < rows; r++) {
    const t = ts[offset + r];
    if (!(t >= 0 && t < width))
      throw new Error(`logprobs: target ${t} at row ${r} is out of range [0, ${width})`);
  }
}

/** out[n] = logits[n, targets[n]] − lse[n], with each row's log-sum-exp from the kernel's mode 2. */
export function logprobs(logits: View, targets: View, out: View, lse: View): void {
  if (!allF32(logits, out, lse)) {
    cpuLogprobs(logits, targets, out, lse);
    return;
  }
  assertDense('logprobs', logits, targets);
  const xs = f32(logits);
  const ts = dataOf(targets);
  const o = f32(out);
  const l = f32(lse);
  const [rows, width] = rowsOf(logits);
  checkTargets(ts, targets.offset, rows, width);
  if (rows === 0) return;
  const id = getWasmRuntime().id(softmaxName(2));
  runRows({
    kernel: 'logprobs',
    rows,
    inputs: [{ data: xs, offset: logits.offset, width }],
    outputs: [{ data: l, offset: lse.offset, width: 1 }],
    workPerRow: 4 * width,
    call: ({ ins, outs }, count) => [id, ins[0], outs[0], count, width],
  });
  for (let r = 0; r < rows; r++)
    o[out.offset + r] = xs[logits.offset + r * width + ts[targets.offset + r]] - l[lse.offset + r];
}

/** dlogits = −g[n]·softmax(logits[n]), then + g[n] at the target. */
export function logprobsBackward(logits: View, targets: View, lse: View, grad: View, dlogits: View): void {
  if (!allF32(logits, lse, grad, dlogits)) {
    cpuLogprobsBackward(logits, targets, lse, grad, dlogits);
    return;
  }
  assertDense('logprobsBackward', logits, targets, lse, grad);
  const [rows, width] = rowsOf(logits);
  if (rows === 0) return;
  const id = getWasmRuntime().id('logprobs_bwd');
  const d = f32(dlogits);
  const g = f32(grad);
  const ts = dataOf(targets);
  runRows({
    kernel: 'logprobsBackward',
    rows,
    inputs: [
      { data: f32(logits), offset: logits.offset, width },
      { data: f32(lse), offset: lse.offset, width: 1 },
      { data: g, offset: grad.offset, width: 1 },
    ],
    outputs: [{ data: d, offset: dlogits.offset, width }],
    workPerRow: 3 * width,
    call: ({ ins, outs }, count) => [id, ins[0], ins[1], ins[2], outs[0], count, width],
  });
  for (let r = 0; r < rows; r++) d[dlogits.offset + r * width + ts[targets.offset + r]] += g[grad.offset + r];
}

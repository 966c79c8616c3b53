import { jsFunction, jsRowLoop } from '../../kernel-ir/render-js.js';
import { LOGPROBS_GRAD, LOG_SUM_EXP, softmaxFunctions } from '../../kernel-ir/rows.js';
import type { View } from '../backend.js';
import { dataOf } from './storage.js';
import { assertDense } from './strided.js';

function rowsOf(v: View): [rows: number, width: number] {
  const width = v.shape.length === 0 ? 1 : v.shape[v.shape.length - 1];
  const size = v.shape.reduce((a, b) => a * b, 1);
  return [width === 0 ? 0 : size / width, width];
}

// The row arithmetic, from the kernel IR (kernel-ir/rows.ts).
const lseOf = jsFunction(LOG_SUM_EXP);
const logprobsGradRow = jsRowLoop(LOGPROBS_GRAD, 1, 'map');
const logSoftmaxAt = jsFunction(softmaxFunctions(true).at);
/** Softmax's row loops ([0]) and log-softmax's ([1]): the output, the backward's dot and its gradient. */
const SOFTMAX_ROWS = [false, true].map((log) => {
  const { at, dot, grad } = softmaxFunctions(log);
  return { at: jsRowLoop(at, 1, 'map'), dot: jsRowLoop(dot, 2, 'sum'), grad: jsRowLoop(grad, 2, 'map') };
});

/** log(sum(exp(row))) with the max subtracted first; -Infinity for an empty or all -Infinity row. */
function logSumExp(xs: ArrayLike<number>, start: number, width: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < width; j++) if (xs[start + j] > max) max = xs[start + j];
  let sum = 0;
  if (max !== Number.NEGATIVE_INFINITY) for (let j = 0; j < width; j++) sum += Math.exp(xs[start + j] - max);
  return lseOf(max, sum);
}

export function softmax(x: View, out: View, log: boolean): void {
  assertDense('softmax', x);
  const xs = dataOf(x);
  const o = dataOf(out);
  const [rows, width] = rowsOf(x);
  const { at } = SOFTMAX_ROWS[Number(log)];
  for (let r = 0; r < rows; r++) {
    const start = x.offset + r * width;
    at(xs, start, logSumExp(xs, start, width), o, r * width, width);
  }
}

export function softmaxBackward(y: View, dy: View, dx: View, log: boolean): void {
  assertDense('softmaxBackward', y, dy);
  const ys = dataOf(y);
  const gs = dataOf(dy);
  const o = dataOf(dx);
  const [rows, width] = rowsOf(y);
  const { dot, grad } = SOFTMAX_ROWS[Number(log)];
  for (let r = 0; r < rows; r++) {
    const yr = y.offset + r * width;
    const gr = dy.offset + r * width;
    grad(ys, yr, gs, gr, dot(ys, yr, gs, gr, width) as number, o, r * width, width);
  }
}

function checkTarget(t: number, width: number, row: number): void {
  if (!(t >= 0 && t < width))
    throw new Error(`logprobs: target ${t} at row ${row} is out of range [0, ${width})`);
}

export function logprobs(logits: View, targets: View, out: View, lse: View): void {
  assertDense('logprobs', logits, targets);
  const xs = dataOf(logits);
  const ts = dataOf(targets);
  const o = dataOf(out);
  const l = dataOf(lse);
  const [rows, width] = rowsOf(logits);
  for (let r = 0; r < rows; r++) {
    const start = logits.offset + r * width;
    const t = ts[targets.offset + r];
    checkTarget(t, width, r);
    const z = logSumExp(xs, start, width);
    l[r] = z;
    o[r] = logSoftmaxAt(xs[start + t], z);
  }
}

export function logprobsBackward(logits: View, targets: View, lse: View, grad: View, dlogits: View): void {
  assertDense('logprobsBackward', logits, targets, lse, grad);
  const xs = dataOf(logits);
  const ts = dataOf(targets);
  const l = dataOf(lse);
  const g = dataOf(grad);
  const o = dataOf(dlogits);
  const [rows, width] = rowsOf(logits);
  for (let r = 0; r < rows; r++) {
    const start = logits.offset + r * width;
    const z = l[lse.offset + r];
    const gr = g[grad.offset + r];
    logprobsGradRow(xs, start, z, gr, o, r * width, width);
    o[r * width + ts[targets.offset + r]] += gr;
  }
}

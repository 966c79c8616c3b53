/** Reductions along axes (with keepdim), their gradients, and summing a broadcast gradient back to a shape. */
import { record } from '../autograd.js';
import type { ReduceOp } from '../backend/backend.js';
import { floatTypeOf } from '../dtype.js';
import { type Shape, contiguousStrides, formatShape, normalizeAxes, normalizeAxis } from '../shape.js';
import type { Tensor } from '../tensor.js';
import { empty } from './internal.js';

type Axes = number | readonly number[] | undefined;

function keptShape(shape: Shape, axes: readonly number[]): number[] {
  return shape.map((d, i) => (axes.includes(i) ? 1 : d));
}

function reducedShape(shape: Shape, axes: readonly number[]): number[] {
  return shape.filter((_, i) => !axes.includes(i));
}

function reducePrimitive(op: ReduceOp, x: Tensor, axes: number[], keepdim: boolean): Tensor {
  const dtype =
    op === 'argmax' || op === 'argmin' ? 'int32' : op === 'sum' && x.dtype === 'bool' ? 'int32' : x.dtype;
  const out = empty(x.backend, keptShape(x.shape, axes), dtype);
  x.backend.kernels.reduce(op, x, axes, out);
  if (keepdim) return out;
  const squeezed = out.view(reducedShape(x.shape, axes), contiguousStrides(reducedShape(x.shape, axes)), 0);
  out.dispose();
  return squeezed;
}

/** The gradient of a reduction, reshaped to keepdim form and broadcast back over the input. */
function spread(g: Tensor, inputShape: Shape, axes: readonly number[]): Tensor {
  return g.reshape(keptShape(inputShape, axes)).expand(inputShape);
}

export function sum(x: Tensor, axes?: Axes, keepdim = false): Tensor {
  const ax = normalizeAxes('sum', axes, x.rank);
  const out = reducePrimitive('sum', x, ax, keepdim);
  const shape = x.shape;
  return record('sum', out, [x], (g) => [spread(g, shape, ax)]);
}

export function mean(x: Tensor, axes?: Axes, keepdim = false): Tensor {
  const ax = normalizeAxes('mean', axes, x.rank);
  const count = ax.reduce((n, a) => n * (x.shape[a] ?? 1), 1);
  const input = x.dtype === floatTypeOf(x.dtype) ? x : x.cast(floatTypeOf(x.dtype));
  const total = sum(input, ax, keepdim);
  const out = total.div(count);
  total.dispose();
  if (input !== x) input.dispose();
  return out;
}

/** max/min: the gradient is shared equally among the positions that attain the extreme value. */
function extreme(op: 'max' | 'min') {
  return (x: Tensor, axes?: Axes, keepdim = false): Tensor => {
    const ax = normalizeAxes(op, axes, x.rank);
    if (ax.some((a) => x.shape[a] === 0))
      throw new Error(`${op}: cannot reduce an empty axis of shape ${formatShape(x.shape)}`);
    const out = reducePrimitive(op, x, ax, keepdim);
    return record(
      op,
      out,
      [x],
      (g, [sx, sy]) => {
        const hits = sx.eq(spread(sy, sx.shape, ax)).cast(g.dtype);
        const count = spread(sum(hits, ax, true), sx.shape, ax);
        return [spread(g, sx.shape, ax).mul(hits).div(count)];
      },
      [x, out],
    );
  };
}
export const max = extreme('max');
export const min = extreme('min');

function argExtreme(op: 'argmax' | 'argmin') {
  return (x: Tensor, axis?: number, keepdim = false): Tensor => {
    if (axis === undefined) {
      const flat = x.reshape([-1]);
      const out = reducePrimitive(op, flat, [0], false);
      flat.dispose();
      return out;
    }
    return reducePrimitive(op, x, [normalizeAxis(op, axis, x.rank)], keepdim);
  };
}
export const argmax = argExtreme('argmax');
export const argmin = argExtreme('argmin');

export interface VarOptions {
  /** Subtracted from the count in the denominator: 1 (default) is the unbiased estimate, 0 the population one. */
  correction?: number;
  keepdim?: boolean;
}

export function variance(x: Tensor, axes?: Axes, options: VarOptions = {}): Tensor {
  const ax = normalizeAxes('var', axes, x.rank);
  const count = ax.reduce((n, a) => n * (x.shape[a] ?? 1), 1);
  const correction = options.correction ?? 1;
  const mu = mean(x, ax, true);
  const centred = x.sub(mu);
  const sq = centred.square();
  const total = sum(sq, ax, options.keepdim ?? false);
  const out = total.div(Math.max(count - correction, 0));
  for (const t of [mu, centred, sq, total]) t.dispose();
  return out;
}

/** Sums a broadcast gradient back to `shape` (the inverse of broadcasting). */
export function sumToShape(g: Tensor, shape: Shape): Tensor {
  if (g.rank === shape.length && g.shape.every((d, i) => d === shape[i])) return g;
  const lead = g.rank - shape.length;
  const axes: number[] = [];
  g.shape.forEach((d, i) => {
    if (i < lead || (shape[i - lead] === 1 && d !== 1)) axes.push(i);
  });
  const summed = sum(g, axes, true);
  const out = summed.reshape(shape);
  summed.dispose();
  return out;
}

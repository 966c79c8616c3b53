/**
 * Shape and layout. reshape (of contiguous data), permute, transpose, slice, narrow, select, expand,
 * squeeze and unsqueeze return views that share storage; concat, stack and contiguous copy.
 */
import { isGradEnabled, record } from '../autograd.js';
import {
  type Shape,
  broadcastShapes,
  contiguousStrides,
  formatShape,
  normalizeAxis,
  shapesEqual,
  sizeOf,
} from '../shape.js';
import type { Tensor } from '../tensor.js';
import { broadcastView, checkSameDevice, empty } from './internal.js';
import { sumToShape } from './reduce.js';

/** Copies x into a new contiguous tensor (always a copy). */
export function clone(x: Tensor): Tensor {
  const out = empty(x.backend, x.shape, x.dtype);
  x.backend.kernels.copy(x, out);
  return record('clone', out, [x], (g) => [g]);
}

/**
 * Writes src (broadcast to dst's shape, cast to its dtype) into the view dst, in place, as torch's copy_.
 * No gradient is recorded: use it for buffers such as a KV cache, not for values that need grads. A parameter
 * (a leaf that requires grad) can be written only under noGrad().
 */
export function copyInto(dst: Tensor, src: Tensor): Tensor {
  checkSameDevice('copy_', [dst, src]);
  // A leaf that requires grad (a parameter) may be overwritten under noGrad(), as in torch: optimizers and
  // checkpoint loading write parameters this way. A computed tensor, or any write with grad on, is refused.
  if (dst.requiresGrad && (isGradEnabled() || !dst.isLeaf)) {
    throw new Error(
      dst.isLeaf
        ? 'copy_: the destination is a leaf that requires grad; write it inside noGrad() (as optimizers do)'
        : 'copy_: the destination requires grad; in-place writes would corrupt its graph',
    );
  }
  const shape = broadcastShapes('copy_', dst.shape, src.shape);
  if (!shapesEqual(shape, dst.shape)) {
    throw new Error(
      `copy_: source ${formatShape(src.shape)} does not broadcast to destination ${formatShape(dst.shape)}`,
    );
  }
  dst.backend.kernels.copy(broadcastView(src, dst.shape), dst);
  return dst;
}

/** x itself if already contiguous (a new handle to it), else a contiguous copy. */
export function contiguous(x: Tensor): Tensor {
  if (x.isContiguous) return viewOf('contiguous', x, x.shape, x.strides, x.offset, (g) => g);
  return clone(x);
}

/** A view of x with a recorded gradient that maps the view's gradient back to x's shape. */
function viewOf(
  op: string,
  x: Tensor,
  shape: Shape,
  strides: readonly number[],
  offset: number,
  back: (g: Tensor) => Tensor,
): Tensor {
  return record(op, x.view(shape, strides, offset), [x], (g) => [back(g)]);
}

function resolveShape(x: Tensor, shape: Shape): number[] {
  const inferred = shape.filter((d) => d === -1).length;
  if (inferred > 1) throw new Error(`reshape: only one dimension can be -1, got ${formatShape(shape)}`);
  const known = shape.reduce((n, d) => (d === -1 ? n : n * d), 1);
  const out = shape.map((d) => (d === -1 ? (known === 0 ? 0 : x.size / known) : d));
  if (sizeOf(out) !== x.size || out.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new Error(
      `reshape: cannot reshape a tensor of shape ${formatShape(x.shape)} (${x.size} elements) to ${formatShape(shape)}`,
    );
  }
  return out;
}

export function reshape(x: Tensor, shape: Shape): Tensor {
  const target = resolveShape(x, shape);
  const original = x.shape;
  if (x.isContiguous) {
    return viewOf('reshape', x, target, contiguousStrides(target), x.offset, (g) => g.reshape(original));
  }
  const copy = clone(x);
  const out = reshape(copy, target);
  copy.dispose();
  return out;
}

export function flatten(x: Tensor, startDim = 0, endDim = -1): Tensor {
  if (x.rank === 0) return reshape(x, [1]);
  const s = normalizeAxis('flatten', startDim, x.rank);
  const e = normalizeAxis('flatten', endDim, x.rank);
  const middle = sizeOf(x.shape.slice(s, e + 1));
  return reshape(x, [...x.shape.slice(0, s), middle, ...x.shape.slice(e + 1)]);
}

export function permute(x: Tensor, dims: readonly number[]): Tensor {
  const axes = dims.map((d) => normalizeAxis('permute', d, x.rank));
  if (axes.length !== x.rank || new Set(axes).size !== x.rank) {
    throw new Error(
      `permute: dims [${dims}] are not a permutation of the ${x.rank} axes of shape ${formatShape(x.shape)}`,
    );
  }
  const inverse = new Array<number>(x.rank);
  axes.forEach((a, i) => {
    inverse[a] = i;
  });
  return viewOf(
    'permute',
    x,
    axes.map((a) => x.shape[a]),
    axes.map((a) => x.strides[a]),
    x.offset,
    (g) => g.permute(inverse),
  );
}

export function transpose(x: Tensor, dim0 = -2, dim1 = -1): Tensor {
  if (x.rank < 2 && dim0 === -2 && dim1 === -1)
    return permute(
      x,
      x.shape.map((_, i) => i),
    );
  const a = normalizeAxis('transpose', dim0, x.rank);
  const b = normalizeAxis('transpose', dim1, x.rank);
  const dims = x.shape.map((_, i) => i);
  [dims[a], dims[b]] = [dims[b], dims[a]];
  return permute(x, dims);
}

/** Elements start, start + step, … below end along dim (negative start/end count from the end). */
export function slice(x: Tensor, dim: number, start: number, end?: number, step = 1): Tensor {
  const d = normalizeAxis('slice', dim, x.rank);
  const size = x.shape[d];
  if (!Number.isInteger(step) || step < 1)
    throw new Error(`slice: step must be a positive integer, got ${step}`);
  const clampIndex = (i: number) => Math.min(Math.max(i < 0 ? i + size : i, 0), size);
  const lo = clampIndex(start);
  const hi = Math.max(lo, clampIndex(end ?? size));
  const n = Math.ceil((hi - lo) / step);
  const shape = x.shape.map((s, i) => (i === d ? n : s));
  const strides = x.strides.map((s, i) => (i === d ? s * step : s));
  const inputShape = x.shape;
  return viewOf('slice', x, shape, strides, x.offset + lo * x.strides[d], (g) => {
    const full = empty(g.backend, inputShape, g.dtype);
    g.backend.kernels.fill(full, 0);
    const region = full.view(
      shape,
      contiguousStrides(inputShape).map((s, i) => (i === d ? s * step : s)),
      lo * contiguousStrides(inputShape)[d],
    );
    g.backend.kernels.copy(g, region);
    region.dispose();
    return full;
  });
}

export function narrow(x: Tensor, dim: number, start: number, length: number): Tensor {
  const d = normalizeAxis('narrow', dim, x.rank);
  if (start < 0 || length < 0 || start + length > x.shape[d]) {
    throw new Error(
      `narrow: [${start}, ${start + length}) is out of range for dimension ${dim} of shape ${formatShape(x.shape)}`,
    );
  }
  return slice(x, d, start, start + length);
}

/** The sub-tensor at `index` along dim, with that dim removed. */
export function select(x: Tensor, dim: number, index: number): Tensor {
  const d = normalizeAxis('select', dim, x.rank);
  const i = index < 0 ? index + x.shape[d] : index;
  if (i < 0 || i >= x.shape[d])
    throw new Error(
      `select: index ${index} is out of range for dimension ${dim} of shape ${formatShape(x.shape)}`,
    );
  const narrowed = slice(x, d, i, i + 1);
  const out = squeeze(narrowed, d);
  narrowed.dispose();
  return out;
}

export function expand(x: Tensor, shape: Shape): Tensor {
  const lead = shape.length - x.rank;
  const target = shape.map((d, i) => (d === -1 && i >= lead ? x.shape[i - lead] : d));
  const ok = lead >= 0 && x.shape.every((d, i) => d === target[i + lead] || d === 1);
  if (!ok) throw new Error(`expand: cannot expand shape ${formatShape(x.shape)} to ${formatShape(shape)}`);
  const strides = target.map((d, i) =>
    i < lead || (x.shape[i - lead] === 1 && d !== 1) ? 0 : x.strides[i - lead],
  );
  const original = x.shape;
  return viewOf('expand', x, target, strides, x.offset, (g) => sumToShape(g, original));
}

export function squeeze(x: Tensor, dim?: number): Tensor {
  const drop =
    dim === undefined
      ? x.shape.map((d, i) => (d === 1 ? i : -1)).filter((i) => i >= 0)
      : [normalizeAxis('squeeze', dim, x.rank)];
  const keepAxis = (_: number, i: number) => !drop.includes(i) || x.shape[i] !== 1;
  const original = x.shape;
  return viewOf('squeeze', x, x.shape.filter(keepAxis), x.strides.filter(keepAxis), x.offset, (g) =>
    g.reshape(original),
  );
}

export function unsqueeze(x: Tensor, dim: number): Tensor {
  const d = normalizeAxis('unsqueeze', dim, x.rank + 1);
  const shape = [...x.shape];
  const strides = [...x.strides];
  shape.splice(d, 0, 1);
  strides.splice(d, 0, d < x.rank ? x.strides[d] * x.shape[d] : 1);
  const original = x.shape;
  return viewOf('unsqueeze', x, shape, strides, x.offset, (g) => g.reshape(original));
}

/** Splits into pieces of `size` (the last may be smaller) or of the given sizes, as views. */
export function split(x: Tensor, sizeOrSizes: number | readonly number[], dim = 0): Tensor[] {
  const d = normalizeAxis('split', dim, x.rank);
  const total = x.shape[d];
  let sizes: number[];
  if (typeof sizeOrSizes === 'number') {
    if (sizeOrSizes <= 0) throw new Error(`split: size must be positive, got ${sizeOrSizes}`);
    sizes = [];
    for (let s = 0; s < total; s += sizeOrSizes) sizes.push(Math.min(sizeOrSizes, total - s));
  } else {
    sizes = [...sizeOrSizes];
    const sum = sizes.reduce((a, b) => a + b, 0);
    if (sum !== total)
      throw new Error(
        `split: sizes [${sizes}] add up to ${sum}, not ${total} (dimension ${dim} of ${formatShape(x.shape)})`,
      );
  }
  let start = 0;
  return sizes.map((n) => {
    const piece = narrow(x, d, start, n);
    start += n;
    return piece;
  });
}

export function concat(tensors: readonly Tensor[], dim = 0): Tensor {
  if (tensors.length === 0) throw new Error('concat: needs at least one tensor');
  const first = tensors[0];
  const d = normalizeAxis('concat', dim, first.rank);
  const backend = checkSameDevice('concat', [...tensors]);
  for (const t of tensors) {
    const same = t.rank === first.rank && t.shape.every((s, i) => i === d || s === first.shape[i]);
    if (!same || t.dtype !== first.dtype) {
      throw new Error(
        `concat: shapes ${tensors.map((x) => `${formatShape(x.shape)} ${x.dtype}`).join(', ')} differ outside dimension ${dim}`,
      );
    }
  }
  const sizes = tensors.map((t) => t.shape[d]);
  const shape = first.shape.map((s, i) => (i === d ? sizes.reduce((a, b) => a + b, 0) : s));
  const out = empty(backend, shape, first.dtype);
  const strides = contiguousStrides(shape);
  let start = 0;
  for (const t of tensors) {
    const region = out.view(t.shape, strides, start * strides[d]);
    backend.kernels.copy(t, region);
    region.dispose();
    start += t.shape[d];
  }
  return record('concat', out, [...tensors], (g) => split(g, sizes, d));
}

export function stack(tensors: readonly Tensor[], dim = 0): Tensor {
  if (tensors.length === 0) throw new Error('stack: needs at least one tensor');
  const first = tensors[0];
  for (const t of tensors) {
    if (!shapesEqual(t.shape, first.shape)) {
      throw new Error(
        `stack: all tensors must have one shape, got ${tensors.map((x) => formatShape(x.shape)).join(', ')}`,
      );
    }
  }
  const d = normalizeAxis('stack', dim, first.rank + 1);
  const expanded = tensors.map((t) => unsqueeze(t, d));
  const out = concat(expanded, d);
  for (const t of expanded) t.dispose();
  return out;
}

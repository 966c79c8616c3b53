/** Gather / index_select / embedding lookup, with scatter-add gradients; one_hot. */
import { record } from '../autograd.js';
import { formatShape, normalizeAxis } from '../shape.js';
import type { Tensor } from '../tensor.js';
import { arange } from './creation.js';
import { checkDtype, checkSameDevice, empty } from './internal.js';

/** out[i][j] = x[index[i][j]][j] for dim 0 (torch.gather): index has x's rank, its size along other dims ≤ x's. */
export function gather(x: Tensor, dim: number, index: Tensor): Tensor {
  const d = normalizeAxis('gather', dim, x.rank);
  checkSameDevice('gather', [x, index]);
  checkDtype('gather', 'index', index, 'int32');
  if (index.rank !== x.rank || index.shape.some((s, i) => i !== d && s > x.shape[i])) {
    throw new Error(
      `gather: index of shape ${formatShape(index.shape)} does not fit input of shape ${formatShape(x.shape)} along dim ${dim}`,
    );
  }
  const out = empty(x.backend, index.shape, x.dtype);
  x.backend.kernels.gather(x, d, index, out);
  const inputShape = x.shape;
  return record(
    'gather',
    out,
    [x],
    (g, [sIndex]) => {
      const grad = empty(g.backend, inputShape, g.dtype);
      g.backend.kernels.fill(grad, 0);
      g.backend.kernels.scatterAdd(grad, d, sIndex, g);
      return [grad];
    },
    [index],
  );
}

/** Rows (or slices along dim) of x picked by a 1-d int32 index. */
export function indexSelect(x: Tensor, dim: number, index: Tensor): Tensor {
  const d = normalizeAxis('indexSelect', dim, x.rank);
  if (index.rank !== 1)
    throw new Error(`indexSelect: index must be 1-d, got shape ${formatShape(index.shape)}`);
  const shape = x.shape.map((s, i) => (i === d ? index.shape[0] : s));
  const viewShape = x.shape.map((_, i) => (i === d ? index.shape[0] : 1));
  const reshaped = index.reshape(viewShape);
  const expanded = reshaped.expand(shape);
  const out = gather(x, d, expanded);
  reshaped.dispose();
  expanded.dispose();
  return out;
}

/** Embedding lookup: weight [V, D], ids int32 of any shape → [...ids.shape, D]. */
export function embedding(weight: Tensor, ids: Tensor): Tensor {
  if (weight.rank !== 2)
    throw new Error(`embedding: weight must be [vocab, dim], got ${formatShape(weight.shape)}`);
  const flat = ids.reshape([-1]);
  const rows = indexSelect(weight, 0, flat);
  const out = rows.reshape([...ids.shape, weight.shape[1]]);
  flat.dispose();
  rows.dispose();
  return out;
}

/** One-hot encoding along a new last axis (no gradient). */
export function oneHot(
  ids: Tensor,
  numClasses: number,
  dtype: 'int32' | 'float32' | 'float64' = 'int32',
): Tensor {
  checkDtype('oneHot', 'ids', ids, 'int32');
  const classes = arange(numClasses, undefined, 1, { device: ids.device });
  const column = ids.unsqueeze(-1);
  const hits = column.eq(classes);
  const out = hits.cast(dtype);
  for (const t of [classes, column, hits]) t.dispose();
  return out;
}

/** Out-of-place scatter-add: a copy of x with src added at index along dim. */
export function scatterAdd(x: Tensor, dim: number, index: Tensor, src: Tensor): Tensor {
  const d = normalizeAxis('scatterAdd', dim, x.rank);
  checkSameDevice('scatterAdd', [x, index, src]);
  checkDtype('scatterAdd', 'index', index, 'int32');
  if (
    index.rank !== x.rank ||
    index.shape.some((s, i) => s !== src.shape[i] || (i !== d && s > x.shape[i]))
  ) {
    throw new Error(
      `scatterAdd: index ${formatShape(index.shape)} and src ${formatShape(src.shape)} must have one shape, of x's rank ${x.rank}, no larger than x ${formatShape(x.shape)} outside dim ${dim}`,
    );
  }
  if (src.dtype !== x.dtype)
    throw new Error(`scatterAdd: src dtype ${src.dtype} differs from x dtype ${x.dtype}`);
  const out = empty(x.backend, x.shape, x.dtype);
  x.backend.kernels.copy(x, out);
  x.backend.kernels.scatterAdd(out, d, index, src);
  return record(
    'scatterAdd',
    out,
    [x, src],
    (g, [sIndex], needs) => [needs[0] ? g : null, needs[1] ? gather(g, d, sIndex) : null],
    [index],
  );
}

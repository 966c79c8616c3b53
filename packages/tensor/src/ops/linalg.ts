/** Batched matrix multiplication with broadcasting over batch dimensions, as torch.matmul. */
import { record } from '../autograd.js';
import { promoteTypes } from '../dtype.js';
import { broadcastShapes, formatShape, sizeOf } from '../shape.js';
import type { Tensor } from '../tensor.js';
import { broadcastView, checkSameDevice, empty } from './internal.js';
import { sumToShape } from './reduce.js';

function checkAligned(a: Tensor, b: Tensor): void {
  const K = a.shape[a.rank - 1];
  if (b.shape[b.rank - 2] !== K) {
    throw new Error(
      `matmul: shapes ${formatShape(a.shape)} and ${formatShape(b.shape)} are not aligned: ${K} (last dim of a) != ${b.shape[b.rank - 2]} (second-to-last dim of b)`,
    );
  }
}

function matmulPrimitive(a: Tensor, b: Tensor): Tensor {
  const M = a.shape[a.rank - 2];
  const K = a.shape[a.rank - 1];
  const N = b.shape[b.rank - 1];
  checkAligned(a, b);
  const batch = broadcastShapes('matmul', a.shape.slice(0, -2), b.shape.slice(0, -2));
  const out = empty(a.backend, [...batch, M, N], a.dtype);
  a.backend.kernels.matmul(broadcastView(a, [...batch, M, K]), broadcastView(b, [...batch, K, N]), out);
  return out;
}

/** Matrix product; 1-d operands are treated as a row (a) or column (b) vector and that axis is dropped. */
export function matmul(a: Tensor, b: Tensor): Tensor {
  checkSameDevice('matmul', [a, b]);
  if (a.rank === 0 || b.rank === 0)
    throw new Error(
      `matmul: operands must have at least 1 dimension, got ${formatShape(a.shape)} and ${formatShape(b.shape)}`,
    );
  if (a.dtype !== b.dtype || a.dtype === 'bool') {
    const dtype = promoteTypes(a.dtype, b.dtype);
    if (dtype === 'bool') throw new Error('matmul: bool tensors cannot be multiplied; cast them first');
    const [ca, cb] = [a.cast(dtype), b.cast(dtype)];
    const out = matmul(ca, cb);
    ca.dispose();
    cb.dispose();
    return out;
  }
  if (a.rank === 1 || b.rank === 1) {
    const a2 = a.rank === 1 ? a.unsqueeze(0) : a;
    const b2 = b.rank === 1 ? b.unsqueeze(-1) : b;
    const full = matmul(a2, b2);
    const dropped = (i: number) =>
      (a.rank === 1 && i === full.rank - 2) || (b.rank === 1 && i === full.rank - 1);
    const out = full.reshape(full.shape.filter((_, i) => !dropped(i)));
    for (const t of [a2, b2, full]) if (t !== a && t !== b) t.dispose();
    return out;
  }
  if (b.rank === 2 && a.rank > 2) {
    checkAligned(a, b);
    // A batch of rows times one matrix (a linear layer): one [rows, K] @ [K, N] product. Its backward is
    // then two plain products too, where the batched form would compute a weight gradient per batch element
    // and sum them.
    const rows = a.reshape([sizeOf(a.shape.slice(0, -1)), a.shape[a.rank - 1]]);
    const flat = matmul(rows, b);
    const out = flat.reshape([...a.shape.slice(0, -1), b.shape[1]]);
    if (rows !== a) rows.dispose();
    flat.dispose();
    return out;
  }
  const out = matmulPrimitive(a, b);
  return record(
    'matmul',
    out,
    [a, b],
    (g, [sa, sb], needs) => [
      needs[0] ? sumToShape(matmulPrimitive(g, sb.transpose(-2, -1)), sa.shape) : null,
      needs[1] ? sumToShape(matmulPrimitive(sa.transpose(-2, -1), g), sb.shape) : null,
    ],
    [a, b],
  );
}

/** Helpers shared by the op families: allocation, broadcasting views, device and dtype checks. */
import type { Backend, View } from '../backend/backend.js';
import { type DType, isFloat, promoteTypes } from '../dtype.js';
import { type Shape, formatShape } from '../shape.js';
import { Tensor, type TensorOrScalar } from '../tensor.js';

export function empty(backend: Backend, shape: Shape, dtype: DType): Tensor {
  return Tensor.empty(backend, shape, dtype);
}

/** A view of t broadcast to `shape` (stride 0 on new and size-1 axes); shape must be broadcast-compatible. */
export function broadcastView(t: Tensor, shape: Shape): View {
  const rank = shape.length;
  const lead = rank - t.rank;
  const strides = shape.map((d, i) => {
    const j = i - lead;
    if (j < 0) return 0;
    return t.shape[j] === 1 && d !== 1 ? 0 : t.strides[j];
  });
  return { storage: t.storage, dtype: t.dtype, shape: [...shape], strides, offset: t.offset };
}

export function checkSameDevice(op: string, tensors: Tensor[]): Backend {
  const backend = tensors[0].backend;
  for (const t of tensors) {
    if (t.backend !== backend) {
      throw new Error(
        `${op}: tensors are on different devices (${backend.name} and ${t.device}); move one with .to()`,
      );
    }
  }
  return backend;
}

export function checkFloat(op: string, t: Tensor): void {
  if (!isFloat(t.dtype))
    throw new Error(
      `${op}: expected a floating-point tensor, got ${t.dtype} of shape ${formatShape(t.shape)}`,
    );
}

export function checkDtype(op: string, what: string, t: Tensor, dtype: DType): void {
  if (t.dtype !== dtype)
    throw new Error(`${op}: ${what} must be ${dtype}, got ${t.dtype} of shape ${formatShape(t.shape)}`);
}

/** The dtype a JS number takes next to a tensor: it adopts a float tensor's dtype, like PyTorch's weak scalars. */
export function scalarDtype(value: number, other: DType): DType {
  if (isFloat(other)) return other;
  return promoteTypes(other, Number.isInteger(value) ? 'int32' : 'float32');
}

/** A 0-d tensor holding `value`, on `like`'s device. */
export function scalarTensor(value: number, dtype: DType, like: Tensor): Tensor {
  const t = empty(like.backend, [], dtype);
  like.backend.kernels.fill(t, value);
  return t;
}

/** Turns a number operand into a tensor next to `like`; tensors pass through. */
export function operand(x: TensorOrScalar, like: Tensor): Tensor {
  return typeof x === 'number' ? scalarTensor(x, scalarDtype(x, like.dtype), like) : x;
}

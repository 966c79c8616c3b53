/** Shape arithmetic shared by ops and backends: sizes, strides, broadcasting, axis normalisation. */
export type Shape = readonly number[];

export function sizeOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function contiguousStrides(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

export function isContiguous(shape: Shape, strides: readonly number[]): boolean {
  let expected = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== 1 && strides[i] !== expected) return false;
    expected *= shape[i];
  }
  return true;
}

export function shapesEqual(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export function formatShape(shape: Shape): string {
  return `[${shape.join(', ')}]`;
}

/** NumPy broadcasting of several shapes; `op` names the culprit in the error. */
export function broadcastShapes(op: string, ...shapes: Shape[]): number[] {
  const rank = Math.max(...shapes.map((s) => s.length));
  const out = new Array<number>(rank).fill(1);
  for (const shape of shapes) {
    for (let i = 0; i < shape.length; i++) {
      const axis = rank - shape.length + i;
      const d = shape[i];
      if (d === out[axis] || d === 1) continue;
      if (out[axis] === 1) out[axis] = d;
      else
        throw new Error(
          `${op}: shapes ${shapes.map(formatShape).join(' and ')} cannot be broadcast together`,
        );
    }
  }
  return out;
}

/** Turns a possibly negative axis into 0..rank-1, or throws naming the op. */
export function normalizeAxis(op: string, axis: number, rank: number): number {
  const a = axis < 0 ? axis + Math.max(rank, 1) : axis;
  if (!Number.isInteger(a) || a < 0 || a >= Math.max(rank, 1)) {
    throw new Error(`${op}: axis ${axis} is out of range for a tensor of rank ${rank}`);
  }
  return a;
}

/** Sorted, unique, non-negative axes; `undefined` means every axis. */
export function normalizeAxes(
  op: string,
  axes: number | readonly number[] | undefined,
  rank: number,
): number[] {
  if (axes === undefined) return Array.from({ length: rank }, (_, i) => i);
  const list = typeof axes === 'number' ? [axes] : axes;
  const out = [...new Set(list.map((a) => normalizeAxis(op, a, rank)))].sort((x, y) => x - y);
  return out;
}

export function checkShape(op: string, shape: Shape): number[] {
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) throw new Error(`${op}: invalid shape ${formatShape(shape)}`);
  }
  return [...shape];
}

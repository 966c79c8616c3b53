/**
 * The index arithmetic of strided and broadcast operands, written once. An operand is a view: a storage
 * offset and one stride per axis of the walk's shape (0 along an axis it is broadcast over, negative where
 * it runs backwards). A kernel walks the shape in row-major order and needs, for each element, every
 * operand's storage offset.
 *
 * - `mergeAxes` (host side, every backend): drops size-1 axes and merges neighbouring axes that every
 *   operand walks as one, so that a dense op becomes one axis and a broadcast keeps only the axes it needs.
 * - `renderOffsetWalk` (GPU kernels): a flat row-major index to each operand's offset, by division and
 *   remainder from the innermost axis out, the outermost axis needing no division. A target gives its
 *   syntax as an `IndexDialect` (render-c.ts, render-wgsl.ts) and says where the extents and strides are.
 *
 * The CPU backends walk by counters instead (backend/cpu/strided.ts: no division per element), over the
 * same merged axes.
 */

/** A walk's shape and each operand's strides along it. */
export interface Axes {
  shape: number[];
  /** One stride list per operand, one stride per axis of `shape`. */
  strides: number[][];
}

/**
 * Drops the axes of size 1 and merges each axis into the one before it where every operand's stride there
 * is the next axis's stride times its size (they walk the two as one); the merged axis keeps the inner
 * stride. A dense walk becomes one axis; an empty shape (a scalar) stays empty.
 */
export function mergeAxes(shape: readonly number[], strides: readonly (readonly number[])[]): Axes {
  const out: Axes = { shape: [], strides: strides.map(() => []) };
  for (let d = 0; d < shape.length; d++) {
    if (shape[d] === 1) continue;
    const last = out.shape.length - 1;
    const walksAsOne = last >= 0 && strides.every((s, k) => out.strides[k][last] === s[d] * shape[d]);
    if (walksAsOne) out.shape[last] *= shape[d];
    else out.shape.push(shape[d]);
    strides.forEach((s, k) => {
      out.strides[k][walksAsOne ? last : last + 1] = s[d];
    });
  }
  return out;
}

/** How a target writes the walk's integer statements. */
export interface IndexDialect {
  /** A mutable variable of the index's type. */
  variable(name: string, value: string): string;
  /** An immutable value, of its expression's type. */
  constant(name: string, value: string): string;
  /** An axis coordinate (of the index's type) as a value of the offsets' type. */
  toOffset(value: string): string;
}

/** One walk of a flat index over `rank` axes, in a target's terms. */
export interface OffsetWalk {
  rank: number;
  /** The flat row-major index, an expression. */
  index: string;
  /** The size of axis `axis` (0 the outermost), an expression of the index's type. */
  extent(axis: number): string;
  /** The operands' offset variables, declared by the caller and holding each operand's start. */
  offsets: readonly string[];
  /** Operand k's stride along `axis`, an expression of the offsets' type. */
  stride(operand: number, axis: number): string;
  /** The name of the index's remainder (distinct where one function walks twice); default `rest`. */
  rest?: string;
}

/** The statements that add each operand's offset of element `walk.index` to its offset variable. */
export function renderOffsetWalk(walk: OffsetWalk, dialect: IndexDialect): string[] {
  if (walk.rank === 0) return [];
  const rest = walk.rest ?? 'rest';
  const lines = [dialect.variable(rest, walk.index)];
  for (let d = walk.rank - 1; d >= 0; d--) {
    const digit =
      d === 0
        ? dialect.constant('c', dialect.toOffset(rest))
        : `${dialect.constant('n', walk.extent(d))} ${dialect.constant('c', dialect.toOffset(`${rest} % n`))} ${rest} = ${rest} / n;`;
    const adds = walk.offsets.map((off, k) => `${off} += c * ${walk.stride(k, d)};`);
    lines.push(`{ ${digit} ${adds.join(' ')} }`);
  }
  return lines;
}

/**
 * Reductions along any set of axes of a strided view. The kept axes and the reduced axes are each collapsed
 * to a short walk; an output element either gets a whole workgroup (tree reduction in workgroup memory,
 * for long reductions or few outputs) or one thread (short reductions over many outputs).
 * Sums accumulate in f32 (i32 for ints and bools), so they differ from the float64 CPU reference by rounding.
 */
import type { ReduceOp, View } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { Params, grid, type GpuQueue } from '../queue.js';
import {
  GROUP_BUILTINS,
  INF,
  IS_NAN,
  LINEAR_GROUP,
  PARAMS,
  buffer,
  collapse,
  sizeOfShape,
  storageType,
} from '../wgsl.js';

const WG = 256;

/** WGSL: offset of linear index `j` along a walk whose shape starts at word `shapeAt` and strides at `strideAt`. */
function walkFn(name: string, rank: number, shapeAt: number, strideAt: number): string {
  const body: string[] = [`fn ${name}(j: u32) -> i32 {`, '  var rest = j;', '  var o = 0;'];
  for (let d = rank - 1; d >= 0; d--) {
    body.push(
      `  { let dim = pu(${shapeAt + d}u); o += i32(rest % dim) * pi(${strideAt + d}u); rest = rest / dim; }`,
    );
  }
  body.push('  return o;', '}');
  return body.join('\n');
}

function identity(op: ReduceOp, acc: 'f32' | 'i32'): string {
  if (op === 'sum') return acc === 'f32' ? '0.0' : '0';
  if (op === 'prod') return acc === 'f32' ? '1.0' : '1';
  const low = op === 'max' || op === 'argmax';
  if (acc === 'f32') return low ? 'neg_inf()' : 'pos_inf()';
  return low ? 'i32(-2147483647 - 1)' : '2147483647';
}

function combineBody(op: ReduceOp, acc: 'f32' | 'i32'): string {
  const nan = acc === 'f32';
  switch (op) {
    case 'sum':
      return 'return Acc(a.v + b.v, 0u);';
    case 'prod':
      return 'return Acc(a.v * b.v, 0u);';
    case 'max':
    case 'min': {
      const f = op === 'max' ? 'max' : 'min';
      return nan
        ? `if (is_nan(a.v)) { return a; } if (is_nan(b.v)) { return b; } return Acc(${f}(a.v, b.v), 0u);`
        : `return Acc(${f}(a.v, b.v), 0u);`;
    }
    case 'argmax':
    case 'argmin': {
      const better = op === 'argmax' ? '>' : '<';
      // First occurrence wins ties, as the CPU's strict comparison does.
      return `if (b.v ${better} a.v || (b.v == a.v && b.i < a.i)) { return b; } return a;`;
    }
  }
}

export function reduce(queue: GpuQueue, op: ReduceOp, x: View, axes: readonly number[], out: View): void {
  const reduced = new Set(axes);
  const keep = x.shape.map((_, i) => i).filter((i) => !reduced.has(i));
  const inner = x.shape.map((_, i) => i).filter((i) => reduced.has(i));
  const outerWalk = collapse(
    keep.map((i) => x.shape[i]),
    [keep.map((i) => x.strides[i])],
  );
  const innerWalk = collapse(
    inner.map((i) => x.shape[i]),
    [inner.map((i) => x.strides[i])],
  );
  const nOut = sizeOfShape(out.shape);
  const m = sizeOfShape(inner.map((i) => x.shape[i]));
  if (nOut === 0) return;
  if (m === 0 && op !== 'sum' && op !== 'prod')
    throw new Error(`webgpu reduce: ${op} of an empty axis has no identity (shape [${x.shape}])`);
  const ro = outerWalk.shape.length;
  const ri = innerWalk.shape.length;
  const xt = storageType(x.dtype);
  const acc: 'f32' | 'i32' = xt === 'f32' ? 'f32' : 'i32';
  const isArg = op === 'argmax' || op === 'argmin';
  const perGroup = m >= 64 || nOut < 256;
  // Words: nOut, m, xOffset, outOffset, outer shape, outer strides, inner shape, inner strides.
  const oShape = 4;
  const oStride = oShape + ro;
  const iShape = oStride + ro;
  const iStride = iShape + ri;
  const key = `reduce|${op}|${x.dtype}|${out.dtype}|${ro}|${ri}|${perGroup}`;
  const result = isArg
    ? 'i32(r.i)'
    : storageType(out.dtype) === 'u32'
      ? 'u32(r.v)'
      : `${storageType(out.dtype)}(r.v)`;
  const pipeline = queue.pipeline(key, () => {
    const common = `${PARAMS}
${buffer(1, 'x', x.dtype)}
${buffer(2, 'out', out.dtype, true)}
${IS_NAN}
${INF}
struct Acc { v: ${acc}, i: u32 }
fn combine(a: Acc, b: Acc) -> Acc { ${combineBody(op, acc)} }
${walkFn('outer_off', ro, oShape, oStride)}
${walkFn('inner_off', ri, iShape, iStride)}
fn load(base: i32, j: u32) -> Acc { return Acc(${acc}(x[u32(base + inner_off(j))]), j); }
fn identity() -> Acc { return Acc(${identity(op, acc)}, 0xffffffffu); }`;
    if (!perGroup) {
      return `${common}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let r0 = group * ${WG}u + lid.x;
  if (r0 >= pu(0u)) { return; }
  let base = pi(2u) + outer_off(r0);
  var r = identity();
  for (var j = 0u; j < pu(1u); j++) { r = combine(r, load(base, j)); }
  out[pu(3u) + r0] = ${result};
}`;
    }
    return `${common}
var<workgroup> partial: array<Acc, ${WG}>;
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let row = group;
  if (row >= pu(0u)) { return; }
  let base = pi(2u) + outer_off(row);
  var r = identity();
  for (var j = lid.x; j < pu(1u); j += ${WG}u) { r = combine(r, load(base, j)); }
  partial[lid.x] = r;
  workgroupBarrier();
  for (var s = ${WG / 2}u; s > 0u; s = s >> 1u) {
    if (lid.x < s) { partial[lid.x] = combine(partial[lid.x], partial[lid.x + s]); }
    workgroupBarrier();
  }
  if (lid.x == 0u) { let r = partial[0]; out[pu(3u) + row] = ${result}; }
}`;
  });
  const params = new Params().u32(nOut, m).i32s(x.offset, out.offset);
  params.i32s(...outerWalk.shape, ...outerWalk.strides[0], ...innerWalk.shape, ...innerWalk.strides[0]);
  const groups = perGroup ? nOut : Math.ceil(nOut / WG);
  queue.dispatch(
    `reduce ${op} ${x.dtype}[${x.shape}] axes [${axes}]`,
    pipeline,
    [{ storage: x.storage as GpuStorage }, { storage: out.storage as GpuStorage, write: true }],
    params,
    grid(groups),
  );
}

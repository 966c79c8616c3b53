/**
 * Reductions along any set of axes of a strided view. The kept axes and the reduced axes are each merged
 * to a short walk; an output element either gets a whole workgroup (tree reduction in workgroup memory,
 * for long reductions or few outputs) or one thread (short reductions over many outputs).
 * Sums accumulate in f32 (i32 for ints and bools), so they differ from the float64 CPU reference by rounding.
 */
import { ARG_REDUCTIONS, VALUE_REDUCTIONS, isArgReduction } from '../../../kernel-ir/reduce.js';
import {
  INF,
  IS_NAN,
  WGSL_INDEX,
  type WgslScalar,
  wgslFunction,
  wgslLiteral,
} from '../../../kernel-ir/render-wgsl.js';
import { mergeAxes, renderOffsetWalk } from '../../../kernel-ir/walk.js';
import type { ReduceOp, View } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { Params, grid, type GpuQueue } from '../queue.js';
import { GROUP_BUILTINS, LINEAR_GROUP, PARAMS, buffer, sizeOfShape, storageType } from '../wgsl.js';

const WG = 256;

/** WGSL: offset of linear index `j` along a walk whose shape starts at word `shapeAt` and strides at `strideAt`. */
function walkFn(name: string, rank: number, shapeAt: number, strideAt: number): string {
  const walk = renderOffsetWalk(
    {
      rank,
      index: 'j',
      extent: (d) => `pu(${shapeAt + d}u)`,
      offsets: ['o'],
      stride: (_, d) => `pi(${strideAt + d}u)`,
    },
    WGSL_INDEX,
  );
  return [
    `fn ${name}(j: u32) -> i32 {`,
    '  var o = 0;',
    ...walk.map((line) => `  ${line}`),
    '  return o;',
    '}',
  ].join('\n');
}

/**
 * The accumulator's identity and combine, from the kernel IR (kernel-ir/reduce.ts). An arg reduction
 * combines (value, index) pairs so that the result is the CPU's sequential answer: the first index of the
 * best value; NaNs are never chosen, except a NaN at index 0, which nothing beats. NONE marks the identity.
 */
function combineSource(op: ReduceOp, acc: WgslScalar): { identity: string; functions: string } {
  if (!isArgReduction(op)) {
    const { identity, combine } = VALUE_REDUCTIONS[op];
    return {
      identity: `Acc(${wgslLiteral(identity, acc)}, 0u)`,
      functions: `${wgslFunction(combine, acc, 'op_combine')}
fn combine(a: Acc, b: Acc) -> Acc { return Acc(op_combine(a.v, b.v), 0u); }`,
    };
  }
  const { identity, better } = ARG_REDUCTIONS[op];
  const nan = (v: string) => (acc === 'f32' ? `is_nan(${v})` : 'false');
  return {
    identity: `Acc(${wgslLiteral(identity, acc)}, NONE)`,
    functions: `${wgslFunction(better, acc, 'op_better')}
const NONE = 0xffffffffu;
fn combine(a: Acc, b: Acc) -> Acc {
  if (a.i == NONE) { return b; }
  if (b.i == NONE) { return a; }
  if (a.i == 0u && ${nan('a.v')}) { return a; }
  if (b.i == 0u && ${nan('b.v')}) { return b; }
  if (${nan('a.v')}) { return b; }
  if (${nan('b.v')}) { return a; }
  if (op_better(a.v, b.v)) { return b; }
  if (op_better(b.v, a.v)) { return a; }
  if (a.i < b.i) { return a; }
  return b;
}`,
  };
}

export function reduce(queue: GpuQueue, op: ReduceOp, x: View, axes: readonly number[], out: View): void {
  const reduced = new Set(axes);
  const keep = x.shape.map((_, i) => i).filter((i) => !reduced.has(i));
  const inner = x.shape.map((_, i) => i).filter((i) => reduced.has(i));
  const outerWalk = mergeAxes(
    keep.map((i) => x.shape[i]),
    [keep.map((i) => x.strides[i])],
  );
  const innerWalk = mergeAxes(
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
  const acc: WgslScalar = xt === 'f32' ? 'f32' : 'i32';
  const isArg = isArgReduction(op);
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
    const reduction = combineSource(op, acc);
    const common = `${PARAMS}
${buffer(1, 'x', x.dtype)}
${buffer(2, 'out', out.dtype, true)}
${IS_NAN}
${INF}
struct Acc { v: ${acc}, i: u32 }
${reduction.functions}
${walkFn('outer_off', ro, oShape, oStride)}
${walkFn('inner_off', ri, iShape, iStride)}
fn load(base: i32, j: u32) -> Acc { return Acc(${acc}(x[u32(base + inner_off(j))]), j); }
fn identity() -> Acc { return ${reduction.identity}; }`;
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

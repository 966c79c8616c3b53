/**
 * The one elementwise kernel: k strided inputs, one strided output, an expression per element. fill, copy
 * (with casts), unary, binary and where are all instances; each pipeline is keyed by its expression, the
 * dtypes and the rank of the merged walk.
 */
import { type DType, isHalf } from '../../../dtype.js';
import { castSteps, renderCast } from '../../../kernel-ir/casts.js';
import { JS_I32, wgslCast } from '../../../kernel-ir/render-wgsl.js';
import { mergeAxes } from '../../../kernel-ir/walk.js';
import type { View } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { Params, grid, type GpuQueue } from '../queue.js';
import {
  GROUP_BUILTINS,
  HALF,
  LINEAR_GROUP,
  PARAMS,
  buffer,
  halfAt,
  sizeOfShape,
  storeHalf,
  stridedOffsets,
  stridedWords,
} from '../wgsl.js';

const WG = 256;

export interface MapSpec {
  /** Kernel name for labels and errors (e.g. 'binary add'). */
  name: string;
  inputs: View[];
  out: View;
  /** WGSL expression over x0…x(k-1) (loaded, in their storage types) giving the output's storage type. */
  expr: string;
  /** Helper functions the expression calls. */
  prelude?: string;
  /** Extra scalar parameters, readable in expr as pu/pi/pf(EXTRA + j). */
  extra?: (p: Params) => void;
  /** Distinguishes pipelines whose expr reads extra parameters differently. */
  keyExtra?: string;
}

export function launchMap(queue: GpuQueue, spec: MapSpec): void {
  const { inputs, out } = spec;
  const n = sizeOfShape(out.shape);
  if (n === 0) return;
  const views = [...inputs, out];
  const walk = mergeAxes(
    out.shape,
    views.map((v) => v.strides),
  );
  const rank = walk.shape.length;
  const count = views.length;
  // Words: [n, shape…, (offset, strides…) per view, extra…]
  const extraBase = 1 + rank + count * (rank + 1);
  const key = `map|${spec.name}|${spec.keyExtra ?? ''}|${views.map((v) => v.dtype).join(',')}|r${rank}|${spec.expr}`;
  const pipeline = queue.pipeline(key, () => {
    const decls = inputs.map((v, k) => buffer(k + 1, `in${k}`, v.dtype)).join('\n');
    const loads = inputs
      .map((v, k) => `  let x${k} = ${isHalf(v.dtype) ? halfAt(`in${k}`, `o[${k}]`) : `in${k}[o[${k}]]`};`)
      .join('\n');
    const at = `o[${count - 1}]`;
    const store = isHalf(out.dtype) ? storeHalf('out', at, spec.expr) : `out[${at}] = ${spec.expr};`;
    return `${PARAMS}
const EXTRA: u32 = ${extraBase}u;
${decls}
${buffer(count, 'out', out.dtype, true)}
${views.some((v) => isHalf(v.dtype)) ? HALF : ''}
${JS_I32}
${spec.prelude ?? ''}
${stridedOffsets(rank, count, 1)}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let i = group * ${WG}u + lid.x;
  if (i >= pu(0u)) { return; }
  let o = offsets_of(i);
${loads}
  ${store}
}`;
  });
  const params = new Params().u32(n);
  params.i32s(
    ...stridedWords(
      walk.shape,
      views.map((v) => v.offset),
      walk.strides,
    ),
  );
  spec.extra?.(params);
  const bindings = [
    ...inputs.map((v) => ({ storage: v.storage as GpuStorage })),
    { storage: out.storage as GpuStorage, write: true },
  ];
  const label = `${spec.name} ${views.map((v) => `${v.dtype}[${v.shape.join(',')}]`).join(' ')}`;
  queue.dispatch(label, pipeline, bindings, params, grid(Math.ceil(n / WG)));
}

/**
 * WGSL converting `x` of storage type `from` to `to`, as a typed-array store does on the CPU (the kernel
 * IR's casts); half types go through f32 (the functions of HALF, which launchMap adds where a view is half).
 */
export function convert(x: string, from: DType, to: DType): string {
  return renderCast(x, castSteps(from, to), wgslCast);
}

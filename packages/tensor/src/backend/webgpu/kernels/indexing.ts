/**
 * gather and scatterAdd along one axis of strided views. WGSL has no float atomics, so scatterAdd adds
 * floats with a compare-exchange loop on the value's bits (ints use atomicAdd): many source elements may
 * hit one destination (an embedding's gradient for a repeated token) and each add must land. The order of
 * float additions is not fixed, so sums may differ from the CPU's in the last bits.
 * Out-of-range indices are reported through the queue's status buffer and thrown on the next read.
 */
import { mergeAxes } from '../../../kernel-ir/walk.js';
import type { View } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { Params, grid, type GpuQueue } from '../queue.js';
import {
  GROUP_BUILTINS,
  LINEAR_GROUP,
  PARAMS,
  buffer,
  sizeOfShape,
  storageType,
  stridedOffsets,
  stridedWords,
} from '../wgsl.js';

const WG = 256;

interface Walk {
  rank: number;
  words: number[];
  extraAt: number;
}

/** The joint walk over index's shape of: index, the target with its `dim` stride zeroed, and the third view. */
function walkOf(index: View, target: View, dim: number, third: View): Walk {
  const targetStrides = target.strides.map((s, i) => (i === dim ? 0 : s));
  const walk = mergeAxes(index.shape, [index.strides, targetStrides, third.strides]);
  const rank = walk.shape.length;
  const words = stridedWords(walk.shape, [index.offset, target.offset, third.offset], walk.strides);
  return { rank, words, extraAt: 1 + words.length };
}

const STATUS = '@group(0) @binding(4) var<storage, read_write> status: array<atomic<i32>, 4>;';

function checkIndex(): string {
  return `if (id < 0 || id >= pi(EXTRA)) {
    atomicStore(&status[0], pi(EXTRA + 2u)); atomicStore(&status[1], id); return;
  }`;
}

export function gather(queue: GpuQueue, x: View, dim: number, index: View, out: View): void {
  const n = sizeOfShape(index.shape);
  if (n === 0) return;
  const w = walkOf(index, x, dim, out);
  const t = storageType(x.dtype);
  const pipeline = queue.pipeline(
    `gather|${t}|${w.rank}`,
    () => `${PARAMS}
const EXTRA: u32 = ${w.extraAt}u;
${buffer(1, 'idx', 'int32')}
${buffer(2, 'x', x.dtype)}
${buffer(3, 'out', out.dtype, true)}
${STATUS}
${stridedOffsets(w.rank, 3, 1)}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let i = group * ${WG}u + lid.x;
  if (i >= pu(0u)) { return; }
  let o = offsets_of(i);
  let id = idx[o[0]];
  ${checkIndex()}
  out[o[2]] = x[u32(i32(o[1]) + id * pi(EXTRA + 1u))];
}`,
  );
  const code = queue.validationCode(
    `gather: an index is out of range for dimension ${dim} of size ${x.shape[dim]} (x ${x.dtype}[${x.shape}])`,
  );
  const params = new Params().u32(n).i32s(...w.words, x.shape[dim], x.strides[dim], code);
  queue.dispatch(
    `gather ${x.dtype}[${x.shape}] dim ${dim}`,
    pipeline,
    [
      { storage: index.storage as GpuStorage },
      { storage: x.storage as GpuStorage },
      { storage: out.storage as GpuStorage, write: true },
      { storage: queue.status, write: true },
    ],
    params,
    grid(Math.ceil(n / WG)),
  );
}

export function scatterAdd(queue: GpuQueue, dst: View, dim: number, index: View, src: View): void {
  const n = sizeOfShape(index.shape);
  if (n === 0) return;
  const w = walkOf(index, dst, dim, src);
  const t = storageType(dst.dtype);
  const add =
    t === 'f32'
      ? `var old = atomicLoad(&dst[at]);
  loop {
    let r = atomicCompareExchangeWeak(&dst[at], old, bitcast<u32>(bitcast<f32>(old) + v));
    if (r.exchanged) { break; }
    old = r.old_value;
  }`
      : `atomicAdd(&dst[at], ${t === 'i32' ? 'v' : 'u32(v)'});`;
  const atomicType = t === 'i32' ? 'i32' : 'u32';
  const pipeline = queue.pipeline(
    `scatterAdd|${t}|${w.rank}`,
    () => `${PARAMS}
const EXTRA: u32 = ${w.extraAt}u;
${buffer(1, 'idx', 'int32')}
@group(0) @binding(2) var<storage, read_write> dst: array<atomic<${atomicType}>>;
${buffer(3, 'src', src.dtype)}
${STATUS}
${stridedOffsets(w.rank, 3, 1)}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let i = group * ${WG}u + lid.x;
  if (i >= pu(0u)) { return; }
  let o = offsets_of(i);
  let id = idx[o[0]];
  ${checkIndex()}
  let at = u32(i32(o[1]) + id * pi(EXTRA + 1u));
  let v = src[o[2]];
  ${add}
}`,
  );
  const code = queue.validationCode(
    `scatterAdd: an index is out of range for dimension ${dim} of size ${dst.shape[dim]} (dst ${dst.dtype}[${dst.shape}])`,
  );
  const params = new Params().u32(n).i32s(...w.words, dst.shape[dim], dst.strides[dim], code);
  queue.dispatch(
    `scatterAdd ${dst.dtype}[${dst.shape}] dim ${dim}`,
    pipeline,
    [
      { storage: index.storage as GpuStorage },
      { storage: dst.storage as GpuStorage, write: true },
      { storage: src.storage as GpuStorage },
      { storage: queue.status, write: true },
    ],
    params,
    grid(Math.ceil(n / WG)),
  );
}

/**
 * Threefry-2x32-20 in WGSL: element i draws from block (key, counter + i), exactly as src/random.ts does on
 * the host, so a seed gives the same words on every backend (floats then agree to rounding: the CPU maps
 * words to values in float64, here in f32).
 */
import type { RandomArgs, View } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { Params, grid, type GpuQueue } from '../queue.js';
import { GROUP_BUILTINS, LINEAR_GROUP, PARAMS, buffer, sizeOfShape, storageType } from '../wgsl.js';

const WG = 256;
const TWO_POW_32 = 2 ** 32;

const THREEFRY = /* wgsl */ `
fn rotl(x: u32, r: u32) -> u32 { return (x << r) | (x >> (32u - r)); }
fn threefry(k0: u32, k1: u32, c0: u32, c1: u32) -> vec2<u32> {
  let ks = array<u32, 3>(k0, k1, 0x1bd11bdau ^ k0 ^ k1);
  let rot = array<u32, 8>(13u, 15u, 26u, 6u, 17u, 29u, 16u, 24u);
  var x0 = c0 + ks[0];
  var x1 = c1 + ks[1];
  for (var group = 0u; group < 5u; group++) {
    for (var j = 0u; j < 4u; j++) {
      x0 = x0 + x1;
      x1 = rotl(x1, rot[(group % 2u) * 4u + j]);
      x1 = x1 ^ x0;
    }
    x0 = x0 + ks[(group + 1u) % 3u];
    x1 = x1 + ks[(group + 2u) % 3u] + group + 1u;
  }
  return vec2<u32>(x0, x1);
}
fn word_to_unit(w: u32) -> f32 { return (f32(w >> 9u) + 0.5) / 8388608.0; }
`;

export function random(queue: GpuQueue, out: View, args: RandomArgs): void {
  const n = sizeOfShape(out.shape);
  if (n === 0) return;
  const t = storageType(out.dtype);
  let value: string;
  if (args.distribution === 'uniform') value = 'pf(5u) + pf(6u) * word_to_unit(w.x)';
  else if (args.distribution === 'normal')
    value =
      'pf(5u) + pf(6u) * sqrt(-2.0 * log(word_to_unit(w.x))) * cos(6.283185307179586 * word_to_unit(w.y))';
  // randint: a + (w0 mod range), with the range an exact u32.
  else value = 'f32(pi(5u)) + f32(w.x % pu(6u))';
  const store =
    args.distribution === 'randint' && t !== 'f32'
      ? `${t}(pi(5u) + i32(w.x % pu(6u)))`
      : t === 'f32'
        ? value
        : `${t}(${value})`;
  const pipeline = queue.pipeline(
    `random|${args.distribution}|${t}`,
    () => `${PARAMS}
${buffer(1, 'out', out.dtype, true)}
${THREEFRY}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let i = group * ${WG}u + lid.x;
  if (i >= pu(0u)) { return; }
  // counter + i with the carry into the high word.
  let lo = pu(3u) + i;
  let hi = pu(4u) + select(0u, 1u, lo < i);
  let w = threefry(pu(1u), pu(2u), lo, hi);
  out[pu(7u) + i] = ${store};
}`,
  );
  const params = new Params().u32(
    n,
    args.key[0],
    args.key[1],
    args.counter % TWO_POW_32,
    Math.floor(args.counter / TWO_POW_32),
  );
  if (args.distribution === 'randint') params.i32s(args.a).u32(args.b - args.a);
  else params.f32s(args.a, args.distribution === 'uniform' ? args.b - args.a : args.b);
  params.u32(out.offset);
  queue.dispatch(
    `random ${args.distribution} ${out.dtype}[${out.shape}]`,
    pipeline,
    [{ storage: out.storage as GpuStorage, write: true }],
    params,
    grid(Math.ceil(n / WG)),
  );
}

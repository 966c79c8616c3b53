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

/**
 * Box–Muller within WGSL's accuracy guarantees. WGSL bounds log's error absolutely near 1 (2^-21), so for
 * u = 1 - e close to 1 the radius sqrt(-2 log u) would be off by percents: there -log(1 - e) is its series
 * in e, exact to f32 rounding (e itself is exact: u has 24 significant bits). And cos is bounded only on
 * [-π, π]: cos(2πv) is taken as -cos(2π(v - 1/2)), whose argument stays there (v - 1/2 is exact too).
 */
const NORMAL = /* wgsl */ `
fn neg_log_unit(w: u32) -> f32 {
  let e = (f32(8388607u - (w >> 9u)) + 0.5) / 8388608.0;
  if (e < 0.0625) {
    return e * (1.0 + e * (0.5 + e * (0.33333334 + e * (0.25 + e * (0.2 + e * (0.16666667 + e * 0.14285715))))));
  }
  return -log(word_to_unit(w));
}
fn standard_normal(w: vec2<u32>) -> f32 {
  return sqrt(2.0 * neg_log_unit(w.x)) * -cos(6.283185307179586 * (word_to_unit(w.y) - 0.5));
}
`;

export function random(queue: GpuQueue, out: View, args: RandomArgs): void {
  const n = sizeOfShape(out.shape);
  if (n === 0) return;
  const t = storageType(out.dtype);
  let value: string;
  if (args.distribution === 'uniform') value = 'pf(5u) + pf(6u) * word_to_unit(w.x)';
  else if (args.distribution === 'normal') value = 'pf(5u) + pf(6u) * standard_normal(w)';
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
${args.distribution === 'normal' ? NORMAL : ''}
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

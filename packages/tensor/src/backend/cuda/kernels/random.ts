/**
 * The random kernel: Threefry-2x32 with 20 rounds, element i from counter + i, exactly as src/random.ts.
 * The arithmetic after the block function is done in double, as JavaScript does it, and rounded once to
 * the output dtype, so each float32 draw is bit-for-bit the CPU backend's (normals up to the last bit of
 * the device's double log/cos against the host's, which agree on all but rare inputs).
 */
import type { DType } from '../../../dtype.js';
import { isContiguous, sizeOf } from '../../../shape.js';
import type { RandomArgs, RandomDistribution, View } from '../../backend.js';
import { type Launcher, gridFor, ptrOf } from '../launcher.js';
import { C_TYPE, type KernelSource, convert, source } from './common.js';

const THREEFRY = `__device__ __forceinline__ unsigned int ar1_rotl(unsigned int x, int r) { return (x << r) | (x >> (32 - r)); }
__device__ __forceinline__ void ar1_threefry(unsigned int k0, unsigned int k1, unsigned int c0, unsigned int c1, unsigned int* w0, unsigned int* w1) {
  const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  unsigned int ks[3] = {k0, k1, 0x1bd11bdau ^ k0 ^ k1};
  unsigned int x0 = c0 + ks[0], x1 = c1 + ks[1];
  #pragma unroll
  for (int g = 0; g < 5; g++) {
    #pragma unroll
    for (int j = 0; j < 4; j++) {
      x0 += x1;
      x1 = ar1_rotl(x1, rot[(g % 2) * 4 + j]);
      x1 ^= x0;
    }
    x0 += ks[(g + 1) % 3];
    x1 += ks[(g + 2) % 3] + (unsigned int)(g + 1);
  }
  *w0 = x0; *w1 = x1;
}
__device__ __forceinline__ double ar1_unit(unsigned int w) { return ((double)(w >> 9) + 0.5) / 8388608.0; }`;

export function randomKernel(distribution: RandomDistribution, dtype: DType): KernelSource {
  if (dtype === 'bool') throw new Error('cuda random: bool outputs are not supported');
  const T = C_TYPE[dtype];
  const name = `ar1_random_${distribution}_${dtype}`;
  const value =
    distribution === 'uniform'
      ? 'a + (b - a) * ar1_unit(w0)'
      : distribution === 'randint'
        ? 'a + fmod((double)w0, b - a)'
        : 'a + b * sqrt(-2.0 * log(ar1_unit(w0))) * cos(6.283185307179586 * ar1_unit(w1))';
  const body = `${THREEFRY}
extern "C" __global__ void ${name}(${T}* __restrict__ out, long long n, unsigned int k0, unsigned int k1, unsigned long long counter, double a, double b) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long c = counter + (unsigned long long)i;
    unsigned int w0, w1;
    ar1_threefry(k0, k1, (unsigned int)(c & 0xffffffffull), (unsigned int)(c >> 32), &w0, &w1);
    double v = ${value};
    out[i] = ${convert('v', 'float64', dtype)};
  }
}`;
  return source(name, body);
}

// ---- launcher ----

export function launchRandom(L: Launcher, out: View, args: RandomArgs): void {
  const n = sizeOf(out.shape);
  if (n === 0) return;
  if (!isContiguous(out.shape, out.strides)) throw new Error('cuda random: expected a contiguous output');
  L.launch(randomKernel(args.distribution, out.dtype), [gridFor(n, 256, L)], 256, [
    ['ptr', ptrOf(out)],
    ['i64', n],
    ['u32', args.key[0]],
    ['u32', args.key[1]],
    ['u64', BigInt(args.counter)],
    ['f64', args.a],
    ['f64', args.b],
  ]);
}

/**
 * Rotary position embedding (and its adjoint) over dense views, one thread per element in a grid-stride
 * loop; see `RotaryArgs`. float32 and float64 (half tensors reach it as float32 copies).
 */
import type { DType } from '../../../dtype.js';
import { sizeOf } from '../../../shape.js';
import type { RotaryArgs } from '../../backend.js';
import { type Launcher, assertDense, gridFor, ptrOf, sameDtype } from '../launcher.js';
import { C_TYPE, type KernelSource, source } from './common.js';

export function rotaryKernel(dtype: DType, transpose: boolean): KernelSource {
  if (dtype !== 'float32' && dtype !== 'float64')
    throw new Error(`cuda rotary: expected float32 or float64, got ${dtype}`);
  const T = C_TYPE[dtype];
  const name = `ar1_rotary_${transpose ? 't_' : ''}${dtype}`;
  const body = `extern "C" __global__ void ${name}(const ${T}* __restrict__ x, const ${T}* __restrict__ c, const ${T}* __restrict__ s, ${T}* __restrict__ out, long long n, long long D, long long H, long long T) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    long long d = i % D;
    long long row = i / D;
    long long half = D / 2;
    long long j = d < half ? d + half : d - half;
    // Rows of x run over (b, h, t); the angle tables' over (b, t).
    long long angle = ((row / (H * T)) * T + row % T) * D;
    ${T} product = x[i] * c[angle + d];
    ${T} partner = x[row * D + j] * s[angle + ${transpose ? 'j' : 'd'}];
    out[i] = product + partner;
  }
}`;
  return source(name, body);
}

export function launchRotary(L: Launcher, { x, cos, sin, out, transpose }: RotaryArgs): void {
  assertDense('rotary', x, cos, sin, out);
  sameDtype('rotary', x, cos, sin, out);
  const n = sizeOf(x.shape);
  if (n === 0) return;
  const [, H, T, D] = x.shape;
  L.launch(rotaryKernel(x.dtype, transpose), [gridFor(n, 256, L)], 256, [
    ['ptr', ptrOf(x)],
    ['ptr', ptrOf(cos)],
    ['ptr', ptrOf(sin)],
    ['ptr', ptrOf(out)],
    ['i64', n],
    ['i64', D],
    ['i64', H],
    ['i64', T],
  ]);
}

/**
 * AdamW, in place on param, m and v. The update (kernel-ir/optim.ts) is computed in double from the stored
 * values and rounded once, as the CPU backend computes it in JavaScript numbers, so float32 results match it
 * bit for bit (the kernel is memory-bound; the double arithmetic costs nothing measurable on data-centre
 * GPUs).
 */
import type { DType } from '../../../dtype.js';
import { sizeOf } from '../../../shape.js';
import { ADAMW_M, ADAMW_P, ADAMW_V } from '../../../kernel-ir/optim.js';
import { cFunction } from '../../../kernel-ir/render-c.js';
import type { AdamWArgs } from '../../backend.js';
import { type Launcher, assertDense, gridFor, ptrOf, sameDtype } from '../launcher.js';
import { C_TYPE, type KernelSource, source } from './common.js';

export function adamwKernel(dtype: DType): KernelSource {
  if (dtype !== 'float32' && dtype !== 'float64')
    throw new Error(`cuda adamw: expected float32 or float64 parameters, got ${dtype}`);
  const T = C_TYPE[dtype];
  const name = `ar1_adamw_${dtype}`;
  const functions = [ADAMW_M, ADAMW_V, ADAMW_P].map((f) => cFunction(f, 'float64', `ar1_${f.name}`));
  const body = `${functions.join('\n')}
extern "C" __global__ void ${name}(${T}* __restrict__ p, const ${T}* __restrict__ g, ${T}* __restrict__ m, ${T}* __restrict__ v, long long n, double lr, double beta1, double beta2, double eps, double decay, double c1, double c2) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    double gi = g[i];
    double mi = ar1_adamw_m((double)m[i], gi, beta1);
    double vi = ar1_adamw_v((double)v[i], gi, beta2);
    m[i] = (${T})mi;
    v[i] = (${T})vi;
    p[i] = (${T})ar1_adamw_p((double)p[i], mi, vi, 1.0 - lr * decay, lr, c1, c2, eps);
  }
}`;
  return source(name, body);
}

// ---- launcher ----

export function launchAdamw(L: Launcher, args: AdamWArgs): void {
  const { param, grad, m, v } = args;
  assertDense('adamw', param, grad, m, v);
  sameDtype('adamw', param, grad, m, v);
  const n = sizeOf(param.shape);
  if (n === 0) return;
  L.launch(adamwKernel(param.dtype), [gridFor(n, 256, L)], 256, [
    ['ptr', ptrOf(param)],
    ['ptr', ptrOf(grad)],
    ['ptr', ptrOf(m)],
    ['ptr', ptrOf(v)],
    ['i64', n],
    ['f64', args.lr],
    ['f64', args.beta1],
    ['f64', args.beta2],
    ['f64', args.eps],
    ['f64', args.weightDecay],
    ['f64', 1 - args.beta1 ** args.step],
    ['f64', 1 - args.beta2 ** args.step],
  ]);
}

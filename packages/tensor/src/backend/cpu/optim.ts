import type { AdamWArgs } from '../backend.js';
import { dataOf } from './storage.js';
import { assertDense } from './strided.js';

/** One AdamW step in place (Loshchilov & Hutter: decoupled weight decay, bias-corrected moments). */
export function adamw(args: AdamWArgs): void {
  const { lr, beta1, beta2, eps, weightDecay, step } = args;
  assertDense('adamw', args.param, args.grad, args.m, args.v);
  const p = dataOf(args.param);
  const g = dataOf(args.grad);
  const m = dataOf(args.m);
  const v = dataOf(args.v);
  const n = args.param.shape.reduce((a, b) => a * b, 1);
  const [po, go, mo, vo] = [args.param.offset, args.grad.offset, args.m.offset, args.v.offset];
  const c1 = 1 - beta1 ** step;
  const c2 = 1 - beta2 ** step;
  for (let i = 0; i < n; i++) {
    const gi = g[go + i];
    const mi = beta1 * m[mo + i] + (1 - beta1) * gi;
    const vi = beta2 * v[vo + i] + (1 - beta2) * gi * gi;
    m[mo + i] = mi;
    v[vo + i] = vi;
    const pi = p[po + i] * (1 - lr * weightDecay);
    p[po + i] = pi - (lr * (mi / c1)) / (Math.sqrt(vi / c2) + eps);
  }
}

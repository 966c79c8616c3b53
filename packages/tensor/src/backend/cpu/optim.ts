import { ADAMW_M, ADAMW_P, ADAMW_V } from '../../kernel-ir/optim.js';
import { jsFunction } from '../../kernel-ir/render-js.js';
import type { AdamWArgs } from '../backend.js';
import { dataOf } from './storage.js';
import { assertDense } from './strided.js';

// The update's arithmetic, from the kernel IR (kernel-ir/optim.ts); each call site sees one function.
const MOMENT1 = jsFunction(ADAMW_M);
const MOMENT2 = jsFunction(ADAMW_V);
const PARAM = jsFunction(ADAMW_P);

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
  const decay = 1 - lr * weightDecay;
  for (let i = 0; i < n; i++) {
    const gi = g[go + i];
    const mi = MOMENT1(m[mo + i], gi, beta1);
    const vi = MOMENT2(v[vo + i], gi, beta2);
    m[mo + i] = mi;
    v[vo + i] = vi;
    p[po + i] = PARAM(p[po + i], mi, vi, decay, lr, c1, c2, eps);
  }
}

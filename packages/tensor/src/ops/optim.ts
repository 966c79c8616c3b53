/** In-place parameter updates for optimizers (no graph is recorded). */
import type { Tensor } from '../tensor.js';
import { checkSameDevice } from './internal.js';
import { formatShape } from '../shape.js';

export interface AdamWHyper {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  /** 1-based step count for bias correction. */
  step: number;
}

/** One fused AdamW step: updates param, m and v in place from grad. */
export function adamwUpdate(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, hyper: AdamWHyper): void {
  checkSameDevice('adamwUpdate', [param, grad, m, v]);
  for (const [name, t] of [
    ['grad', grad],
    ['m', m],
    ['v', v],
  ] as const) {
    if (t.size !== param.size || t.dtype !== param.dtype || !t.isContiguous) {
      throw new Error(
        `adamwUpdate: ${name} ${formatShape(t.shape)} ${t.dtype} must be contiguous and match param ${formatShape(param.shape)} ${param.dtype}`,
      );
    }
  }
  if (!param.isContiguous)
    throw new Error(`adamwUpdate: param ${formatShape(param.shape)} must be contiguous`);
  param.backend.kernels.adamw({
    param,
    grad,
    m,
    v,
    lr: hyper.lr,
    beta1: hyper.beta1 ?? 0.9,
    beta2: hyper.beta2 ?? 0.999,
    eps: hyper.eps ?? 1e-8,
    weightDecay: hyper.weightDecay ?? 0.01,
    step: hyper.step,
  });
}

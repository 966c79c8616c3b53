import { type Tensor, keep, tidy } from '@agent-r1/tensor';
import { type BaseHyper, type ParamGroup, type ParamGroupSpec, Optimizer, checkNumber } from './optimizer.js';

export interface SGDOptions {
  lr?: number;
  momentum?: number;
  dampening?: number;
  nesterov?: boolean;
  weightDecay?: number;
}

export interface SGDHyperParams extends BaseHyper {
  momentum: number;
  dampening: number;
  nesterov: boolean;
}

export type SGDParamGroup = ParamGroupSpec<SGDHyperParams>;

/**
 * Stochastic gradient descent with optional momentum (PyTorch's formulation), Nesterov momentum and L2
 * weight decay, written with tensor ops:
 *
 *   g = grad + weightDecay·p;  buf = g (first step) or momentum·buf + (1 − dampening)·g
 *   p ← p − lr·(nesterov ? g + momentum·buf : buf)          (p ← p − lr·g without momentum)
 *
 * Parameters are written in place with copy_ under noGrad. The momentum buffer is named "momentum".
 */
export class SGD extends Optimizer<SGDHyperParams> {
  get kind(): string {
    return 'SGD';
  }

  protected get bufferNames(): readonly string[] {
    return ['momentum'];
  }

  constructor(params: Iterable<Tensor> | readonly SGDParamGroup[], options: SGDOptions = {}) {
    super(params, {
      lr: options.lr ?? 1e-2,
      momentum: options.momentum ?? 0,
      dampening: options.dampening ?? 0,
      nesterov: options.nesterov ?? false,
      weightDecay: options.weightDecay ?? 0,
    });
  }

  protected override checkHyper(hyper: SGDHyperParams, where: string): void {
    super.checkHyper(hyper, where);
    checkNumber('SGD', where, 'momentum', hyper.momentum, 0);
    checkNumber('SGD', where, 'dampening', hyper.dampening, 0);
    if (typeof hyper.nesterov !== 'boolean')
      throw new Error(`SGD: ${where}: nesterov must be a boolean, got ${String(hyper.nesterov)}`);
    if (hyper.nesterov && (hyper.momentum <= 0 || hyper.dampening !== 0))
      throw new Error(`SGD: ${where}: nesterov momentum needs momentum > 0 and dampening 0`);
  }

  protected update(
    param: Tensor,
    grad: Tensor,
    group: ParamGroup<SGDHyperParams>,
    lr: number,
    buffers: Record<string, Tensor>,
  ): void {
    tidy(() => {
      let d = group.weightDecay !== 0 ? grad.add(param.mul(group.weightDecay)) : grad;
      if (group.momentum !== 0) {
        const buf = buffers.momentum;
        if (!buf) buffers.momentum = keep(d.clone());
        else buf.copy_(buf.mul(group.momentum).add(d.mul(1 - group.dampening)));
        d = group.nesterov ? d.add(buffers.momentum.mul(group.momentum)) : buffers.momentum;
      }
      param.copy_(param.sub(d.mul(lr)));
    });
  }
}

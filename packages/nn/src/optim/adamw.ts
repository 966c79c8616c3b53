import { type Tensor, adamwUpdate, keep, zerosLike } from '@agent-r1/tensor';
import { type BaseHyper, type ParamGroup, type ParamGroupSpec, Optimizer, checkNumber } from './optimizer.js';

export interface AdamWOptions {
  lr?: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

export interface AdamWHyperParams extends BaseHyper {
  betas: [number, number];
  eps: number;
}

export type AdamWParamGroup = ParamGroupSpec<AdamWHyperParams>;

/**
 * AdamW (decoupled weight decay) through the fused adamw primitive. Takes a list of parameters, or groups
 * with their own settings, as PyTorch does:
 *
 *   new AdamW([{ params: decayed }, { params: normsAndBiases, weightDecay: 0 }], { lr: 3e-4 })
 *
 * Moments ("m", "v") are created on a parameter's first update and kept out of every tidy scope.
 */
export class AdamW extends Optimizer<AdamWHyperParams> {
  get kind(): string {
    return 'AdamW';
  }

  protected get bufferNames(): readonly string[] {
    return ['m', 'v'];
  }

  constructor(params: Iterable<Tensor> | readonly AdamWParamGroup[], options: AdamWOptions = {}) {
    super(params, {
      lr: options.lr ?? 1e-3,
      betas: options.betas ?? [0.9, 0.999],
      eps: options.eps ?? 1e-8,
      weightDecay: options.weightDecay ?? 0.01,
    });
  }

  protected override checkHyper(hyper: AdamWHyperParams, where: string): void {
    super.checkHyper(hyper, where);
    if (!Array.isArray(hyper.betas) || hyper.betas.length !== 2)
      throw new Error(
        `AdamW: ${where}: betas must be a pair [beta1, beta2], got ${JSON.stringify(hyper.betas)}`,
      );
    checkNumber('AdamW', where, 'betas[0]', hyper.betas[0], 0, 1);
    checkNumber('AdamW', where, 'betas[1]', hyper.betas[1], 0, 1);
    checkNumber('AdamW', where, 'eps', hyper.eps, 0);
  }

  protected update(
    param: Tensor,
    grad: Tensor,
    group: ParamGroup<AdamWHyperParams>,
    lr: number,
    buffers: Record<string, Tensor>,
  ): void {
    // Optimizer state outlives any tidy scope the step runs in.
    buffers.m ??= keep(zerosLike(param));
    buffers.v ??= keep(zerosLike(param));
    adamwUpdate(param, grad, buffers.m, buffers.v, {
      lr,
      beta1: group.betas[0],
      beta2: group.betas[1],
      eps: group.eps,
      weightDecay: group.weightDecay,
      step: this.stepCount,
    });
  }
}

import type { Tensor } from '@agent-r1/tensor';
import { Module } from '../module.js';
import { type InitOptions, normalInit, uniformInit, zerosInit } from './init.js';

export interface LinearOptions extends InitOptions {
  bias?: boolean;
  /** Draw weights from N(0, std²) with a zero bias, instead of PyTorch's U(-1/√in, 1/√in). */
  std?: number;
}

/** y = x Wᵀ + b, with W stored [out, in] as in PyTorch. */
export class Linear extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;

  constructor(
    readonly inFeatures: number,
    readonly outFeatures: number,
    options: LinearOptions = {},
  ) {
    super();
    const bound = 1 / Math.sqrt(inFeatures);
    const weight =
      options.std === undefined
        ? uniformInit([outFeatures, inFeatures], bound, options)
        : normalInit([outFeatures, inFeatures], options.std, options);
    this.weight = this.parameter('weight', weight);
    const bias =
      options.std === undefined
        ? uniformInit([outFeatures], bound, options)
        : zerosInit([outFeatures], options);
    if (options.bias === false) bias.dispose();
    this.bias = options.bias === false ? null : this.parameter('bias', bias);
  }

  forward(x: Tensor): Tensor {
    if (x.shape[x.rank - 1] !== this.inFeatures) {
      throw new Error(
        `Linear(${this.inFeatures}, ${this.outFeatures}): input's last dimension is ${x.shape[x.rank - 1]} (shape [${x.shape}])`,
      );
    }
    const wt = this.weight.transpose(0, 1);
    const y = x.matmul(wt);
    wt.dispose();
    if (!this.bias) return y;
    const out = y.add(this.bias);
    y.dispose();
    return out;
  }
}

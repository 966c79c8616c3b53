import { type Tensor, layerNorm, rmsNorm } from '@agent-r1/tensor';
import { Module } from '../module.js';
import { type InitOptions, onesInit, zerosInit } from './init.js';

/** Layer normalisation over the last axis, with learned scale and shift. */
export class LayerNorm extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor;

  constructor(
    readonly dim: number,
    readonly eps = 1e-5,
    options: InitOptions = {},
  ) {
    super();
    this.weight = this.parameter('weight', onesInit([dim], options));
    this.bias = this.parameter('bias', zerosInit([dim], options));
  }

  forward(x: Tensor): Tensor {
    return layerNorm(x, this.weight, this.bias, this.eps);
  }
}

/** RMS normalisation over the last axis, with a learned scale. */
export class RMSNorm extends Module {
  readonly weight: Tensor;

  constructor(
    readonly dim: number,
    readonly eps = 1e-6,
    options: InitOptions = {},
  ) {
    super();
    this.weight = this.parameter('weight', onesInit([dim], options));
  }

  forward(x: Tensor): Tensor {
    return rmsNorm(x, this.weight, this.eps);
  }
}

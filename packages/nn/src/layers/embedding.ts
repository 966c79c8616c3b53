import { type Tensor, embedding } from '@agent-r1/tensor';
import { Module } from '../module.js';
import { type InitOptions, normalInit } from './init.js';

/** A lookup table [numEmbeddings, dim], initialised N(0, std²) (0.02 by default, as GPT-2). */
export class Embedding extends Module {
  readonly weight: Tensor;

  constructor(
    readonly numEmbeddings: number,
    readonly dim: number,
    options: InitOptions & { std?: number } = {},
  ) {
    super();
    this.weight = this.parameter('weight', normalInit([numEmbeddings, dim], options.std ?? 0.02, options));
  }

  /** ids: int32 of any shape → [...ids.shape, dim]. */
  forward(ids: Tensor): Tensor {
    return embedding(this.weight, ids);
  }
}

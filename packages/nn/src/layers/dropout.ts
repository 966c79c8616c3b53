import { type Generator, type Tensor, dropout } from '@agent-r1/tensor';
import { Module } from '../module.js';

/** Zeroes elements with probability p while training (scaling the rest by 1/(1-p)); identity in eval mode. */
export class Dropout extends Module {
  constructor(
    readonly p: number,
    readonly generator?: Generator,
  ) {
    super();
    if (p < 0 || p >= 1) throw new Error(`Dropout: p must be in [0, 1), got ${p}`);
  }

  forward(x: Tensor): Tensor {
    return dropout(x, this.p, { training: this.training, generator: this.generator });
  }
}

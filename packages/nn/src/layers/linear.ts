import { type Generator, type Tensor, uniform } from '@agent-r1/tensor';
import { Module } from '../module.js';

export interface LinearOptions {
  bias?: boolean;
  dtype?: 'float32' | 'float64';
  device?: string;
  generator?: Generator;
}

/** y = x Wᵀ + b, with W stored [out, in] and both initialised U(-1/√in, 1/√in) as in PyTorch. */
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
    const init = {
      dtype: options.dtype ?? 'float32',
      device: options.device,
      generator: options.generator,
    } as const;
    this.weight = this.parameter('weight', uniform([outFeatures, inFeatures], -bound, bound, init));
    this.bias =
      options.bias === false ? null : this.parameter('bias', uniform([outFeatures], -bound, bound, init));
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

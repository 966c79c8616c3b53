import { type Tensor, tidy } from '@agent-r1/tensor';
import { Module } from '../module.js';
import type { InitOptions } from './init.js';
import { Linear } from './linear.js';

export interface MlpOptions extends InitOptions {
  /** 'gelu': down(gelu(up(x))); 'swiglu': down(silu(gate(x)) * up(x)) as in LLaMA. */
  activation?: 'gelu' | 'swiglu';
  bias?: boolean;
  std?: number;
  /** Std of the output projection (GPT-2 scales it down with depth). */
  outStd?: number;
}

/** The position-wise feed-forward block of a transformer. */
export class Mlp extends Module {
  readonly up: Linear;
  readonly gate: Linear | null;
  readonly down: Linear;
  readonly activation: 'gelu' | 'swiglu';

  constructor(dim: number, hidden: number, options: MlpOptions = {}) {
    super();
    this.activation = options.activation ?? 'gelu';
    const layer = { ...options, bias: options.bias ?? false };
    this.up = this.module('up', new Linear(dim, hidden, layer));
    this.gate = this.activation === 'swiglu' ? this.module('gate', new Linear(dim, hidden, layer)) : null;
    this.down = this.module(
      'down',
      new Linear(hidden, dim, { ...layer, std: options.outStd ?? options.std }),
    );
  }

  forward(x: Tensor): Tensor {
    return tidy(() => {
      const h = this.gate ? this.gate.forward(x).silu().mul(this.up.forward(x)) : this.up.forward(x).gelu();
      return this.down.forward(h);
    });
  }
}

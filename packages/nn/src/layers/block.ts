import { type Tensor, tidy } from '@agent-r1/tensor';
import { Module } from '../module.js';
import { type AttentionConfig, type AttentionContext, CausalSelfAttention } from './attention.js';
import { Mlp } from './mlp.js';
import { LayerNorm, RMSNorm } from './norm.js';

export interface BlockConfig extends AttentionConfig {
  ffnHidden: number;
  activation: 'gelu' | 'swiglu';
  norm: 'rms' | 'layer';
}

export function makeNorm(
  kind: 'rms' | 'layer',
  dim: number,
  config: BlockConfig | AttentionConfig,
): LayerNorm | RMSNorm {
  return kind === 'rms'
    ? new RMSNorm(dim, config.normEps ?? 1e-6, config)
    : new LayerNorm(dim, config.normEps ?? 1e-5, config);
}

/** A pre-norm decoder block: x + attn(norm(x)), then + mlp(norm(·)). */
export class DecoderBlock extends Module {
  readonly attnNorm: LayerNorm | RMSNorm;
  readonly attn: CausalSelfAttention;
  readonly mlpNorm: LayerNorm | RMSNorm;
  readonly mlp: Mlp;

  constructor(config: BlockConfig) {
    super();
    this.attnNorm = this.module('attnNorm', makeNorm(config.norm, config.dim, config));
    this.attn = this.module('attn', new CausalSelfAttention(config));
    this.mlpNorm = this.module('mlpNorm', makeNorm(config.norm, config.dim, config));
    this.mlp = this.module(
      'mlp',
      new Mlp(config.dim, config.ffnHidden, {
        ...config,
        activation: config.activation,
        outStd: config.outStd,
      }),
    );
  }

  forward(x: Tensor, ctx: AttentionContext): Tensor {
    const drop = ctx.drop ?? ((t: Tensor) => t);
    return tidy(() => {
      const h = x.add(drop(this.attn.forward(this.attnNorm.forward(x), ctx)));
      return h.add(drop(this.mlp.forward(this.mlpNorm.forward(h))));
    });
  }
}

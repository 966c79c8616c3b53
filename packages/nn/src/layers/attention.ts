import { type Tensor, scaledDotProductAttention, tidy } from '@agent-r1/tensor';
import type { KVCache } from '../generate/kv-cache.js';
import { Module } from '../module.js';
import type { InitOptions } from './init.js';
import { Linear } from './linear.js';
import { RMSNorm } from './norm.js';
import { applyRotary } from './rope.js';

export interface AttentionConfig extends InitOptions {
  dim: number;
  heads: number;
  /** Key/value heads (grouped-query attention); equals `heads` for plain multi-head attention. */
  kvHeads: number;
  std: number;
  outStd: number;
  /** Features per head (default dim / heads, which must then be a whole number). */
  headDim?: number;
  /** Biases on the query, key and value projections, as Qwen2 has (default false). */
  qkvBias?: boolean;
  /** RMS-normalises each head's queries and keys (learned scales over the head's features) before the
   * rotation, as Qwen3 does (default false). */
  qkNorm?: boolean;
  /** The epsilon of RMS norms (default 1e-6). */
  normEps?: number;
}

/** What one forward pass tells every attention layer: rotary angles and which keys each query may see. */
export interface AttentionContext {
  cos: Tensor;
  sin: Tensor;
  /** Bool [B, 1, T, S] keep-mask, or null for plain causal attention over the given tokens. */
  mask: Tensor | null;
  /** With a cache: the layer index and the number of new positions per row. */
  cache: { kv: KVCache; layer: number; added: readonly number[]; keys: number } | null;
  /** Residual dropout: applied to each sub-layer's output before it is added (training passes only). */
  drop?: (x: Tensor) => Tensor;
}

/** Causal multi-head self-attention with rotary positions and grouped-query heads. */
export class CausalSelfAttention extends Module {
  readonly q: Linear;
  readonly k: Linear;
  readonly v: Linear;
  readonly o: Linear;
  readonly qNorm: RMSNorm | null;
  readonly kNorm: RMSNorm | null;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;

  constructor(config: AttentionConfig) {
    super();
    const { dim, heads, kvHeads } = config;
    if (config.headDim === undefined && dim % heads !== 0)
      throw new Error(`CausalSelfAttention: dim ${dim} is not divisible by heads ${heads}`);
    if (heads % kvHeads !== 0)
      throw new Error(`CausalSelfAttention: heads ${heads} is not a multiple of kvHeads ${kvHeads}`);
    this.heads = heads;
    this.kvHeads = kvHeads;
    this.headDim = config.headDim ?? dim / heads;
    const init = { ...config, bias: false, std: config.std };
    const qkv = { ...init, bias: config.qkvBias ?? false };
    this.q = this.module('q', new Linear(dim, heads * this.headDim, qkv));
    this.k = this.module('k', new Linear(dim, kvHeads * this.headDim, qkv));
    this.v = this.module('v', new Linear(dim, kvHeads * this.headDim, qkv));
    this.o = this.module('o', new Linear(heads * this.headDim, dim, { ...init, std: config.outStd }));
    const eps = config.normEps ?? 1e-6;
    this.qNorm = config.qkNorm ? this.module('qNorm', new RMSNorm(this.headDim, eps, config)) : null;
    this.kNorm = config.qkNorm ? this.module('kNorm', new RMSNorm(this.headDim, eps, config)) : null;
  }

  forward(x: Tensor, ctx: AttentionContext): Tensor {
    return tidy(() => {
      const [B, T] = x.shape;
      const split = (proj: Linear, heads: number, norm: RMSNorm | null = null) => {
        const h = proj.forward(x).reshape([B, T, heads, this.headDim]);
        return (norm ? norm.forward(h) : h).transpose(1, 2);
      };
      const q = applyRotary(split(this.q, this.heads, this.qNorm), ctx.cos, ctx.sin);
      let k = applyRotary(split(this.k, this.kvHeads, this.kNorm), ctx.cos, ctx.sin);
      let v = split(this.v, this.kvHeads);
      if (ctx.cache) {
        const { kv, layer, added, keys } = ctx.cache;
        kv.write(layer, k, v, added);
        k = kv.keys[layer].narrow(2, 0, keys);
        v = kv.values[layer].narrow(2, 0, keys);
      }
      const attended = scaledDotProductAttention(q, k, v, { causal: ctx.mask === null, mask: ctx.mask });
      return this.o.forward(attended.transpose(1, 2).reshape([B, T, this.heads * this.headDim]));
    });
  }
}

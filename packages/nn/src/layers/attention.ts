import { type Tensor, scaledDotProductAttention, tidy } from '@agent-r1/tensor';
import type { KVCache } from '../generate/kv-cache.js';
import { Module } from '../module.js';
import type { InitOptions } from './init.js';
import { Linear } from './linear.js';
import { applyRotary } from './rope.js';

export interface AttentionConfig extends InitOptions {
  dim: number;
  heads: number;
  /** Key/value heads (grouped-query attention); equals `heads` for plain multi-head attention. */
  kvHeads: number;
  std: number;
  outStd: number;
}

/** What one forward pass tells every attention layer: rotary angles and which keys each query may see. */
export interface AttentionContext {
  cos: Tensor;
  sin: Tensor;
  /** Bool [B, 1, T, S] keep-mask, or null for plain causal attention over the given tokens. */
  mask: Tensor | null;
  /** With a cache: the layer index and the number of new positions per row. */
  cache: { kv: KVCache; layer: number; added: readonly number[]; keys: number } | null;
}

/** Causal multi-head self-attention with rotary positions and grouped-query heads. */
export class CausalSelfAttention extends Module {
  readonly q: Linear;
  readonly k: Linear;
  readonly v: Linear;
  readonly o: Linear;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;

  constructor(config: AttentionConfig) {
    super();
    const { dim, heads, kvHeads } = config;
    if (dim % heads !== 0)
      throw new Error(`CausalSelfAttention: dim ${dim} is not divisible by heads ${heads}`);
    if (heads % kvHeads !== 0)
      throw new Error(`CausalSelfAttention: heads ${heads} is not a multiple of kvHeads ${kvHeads}`);
    this.heads = heads;
    this.kvHeads = kvHeads;
    this.headDim = dim / heads;
    const init = { ...config, bias: false, std: config.std };
    this.q = this.module('q', new Linear(dim, heads * this.headDim, init));
    this.k = this.module('k', new Linear(dim, kvHeads * this.headDim, init));
    this.v = this.module('v', new Linear(dim, kvHeads * this.headDim, init));
    this.o = this.module('o', new Linear(heads * this.headDim, dim, { ...init, std: config.outStd }));
  }

  forward(x: Tensor, ctx: AttentionContext): Tensor {
    return tidy(() => {
      const [B, T] = x.shape;
      const split = (proj: Linear, heads: number) =>
        proj.forward(x).reshape([B, T, heads, this.headDim]).transpose(1, 2);
      const q = applyRotary(split(this.q, this.heads), ctx.cos, ctx.sin);
      let k = applyRotary(split(this.k, this.kvHeads), ctx.cos, ctx.sin);
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

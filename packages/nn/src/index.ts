/**
 * @agent-r1/nn — models on top of @agent-r1/tensor: modules and layers, a decoder-only transformer policy
 * with an optional value head, KV-cache generation, optimizers, checkpoints and a byte-level BPE tokenizer.
 */
export { Module } from './module.js';
export { Linear, type LinearOptions } from './layers/linear.js';
export { Embedding } from './layers/embedding.js';
export { LayerNorm, RMSNorm } from './layers/norm.js';
export { Dropout } from './layers/dropout.js';
export { Mlp, type MlpOptions } from './layers/mlp.js';
export { RotaryTables, applyRotary, inverseFrequencies, type RopeScaling } from './layers/rope.js';
export { CausalSelfAttention, type AttentionConfig, type AttentionContext } from './layers/attention.js';
export { DecoderBlock, type BlockConfig } from './layers/block.js';
export { type CopyContext, CopyHead } from './layers/copy-head.js';
export {
  TransformerLM,
  resolveConfig,
  type TransformerConfig,
  type ResolvedConfig,
  type ForwardOptions,
  type ForwardResult,
} from './models/transformer-lm.js';
export { KVCache, type KVCacheShape } from './generate/kv-cache.js';
export { sampleToken, type SamplingOptions, type Sampled } from './generate/sampling.js';
export {
  generate,
  generateAsync,
  extend,
  extendAsync,
  type RowLogits,
  type GenerateOptions,
  type GenerateResult,
  type FinishReason,
} from './generate/generate.js';
export * from './optim/index.js';
export * from './io/index.js';
export * from './tokenizer/index.js';
export * from './hf/index.js';

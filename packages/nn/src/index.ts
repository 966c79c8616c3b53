/**
 * @agent-r1/nn — models on top of @agent-r1/tensor. This first cut holds the Module base class, Linear and
 * AdamW; the transformer policy, tokenizer, generation and checkpoints follow.
 */
export { Module } from './module.js';
export { Linear, type LinearOptions } from './layers/linear.js';
export { AdamW, type AdamWOptions } from './optim/adamw.js';

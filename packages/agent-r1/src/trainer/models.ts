/** Building the models a run needs from its config: policy, frozen reference, separate critic. */
import { type TransformerConfig, TransformerLM } from '@agent-r1/nn';
import { noGrad, tidy } from '@agent-r1/tensor';
import type { TrainConfig } from './config.js';

/**
 * The policy's TransformerConfig: `config.model`'s shape, or `pretrained` (the architecture of the folder
 * `model.from` names, e.g. `readHfModelInfo(dir).transformer`) with the run's `model.maxLength`.
 */
export function policyConfig(
  config: TrainConfig,
  vocabSize: number,
  valueHead: boolean,
  pretrained?: TransformerConfig,
): TransformerConfig {
  const { from: _, chatVariables: __, ...shape } = config.model;
  const model = pretrained ? { ...pretrained, maxLength: config.model.maxLength } : shape;
  return { ...model, vocabSize, seed: config.seed, valueHead, device: config.backend };
}

export function buildPolicy(
  config: TrainConfig,
  vocabSize: number,
  pretrained?: TransformerConfig,
): TransformerLM {
  const sharedCritic = config.algorithm.name === 'ppo' && config.critic.shareTrunk;
  return new TransformerLM(policyConfig(config, vocabSize, sharedCritic, pretrained));
}

/** A separate critic (PPO without a shared trunk): the policy's architecture with a value head. */
export function buildCritic(
  config: TrainConfig,
  vocabSize: number,
  pretrained?: TransformerConfig,
): TransformerLM | null {
  if (config.algorithm.name !== 'ppo' || config.critic.shareTrunk) return null;
  return new TransformerLM({ ...policyConfig(config, vocabSize, true, pretrained), seed: config.seed + 1 });
}

/** A frozen copy of `policy` (its weights now), for the KL term. */
export function freezeCopy(policy: TransformerLM): TransformerLM {
  const copy = new TransformerLM(policy.config);
  const source = new Map(policy.namedParameters());
  noGrad(() => {
    for (const [name, p] of copy.namedParameters()) tidy(() => p.copy_(source.get(name)!));
  });
  for (const p of copy.parameters()) p.requiresGrad = false;
  return copy;
}

/** Building the models a run needs from its config: policy, frozen reference, separate critic. */
import { type TransformerConfig, TransformerLM } from '@agent-r1/nn';
import { noGrad, tidy } from '@agent-r1/tensor';
import type { AgentTask } from '../tasks/task.js';
import type { TrainConfig } from './config.js';

/** What building a model needs from the task: its vocabulary, and its tokenizer for token-valued keys. */
export type ModelVocabulary = Pick<AgentTask, 'vocabSize' | 'codec'>;

export function policyConfig(
  config: TrainConfig,
  vocabulary: ModelVocabulary,
  valueHead: boolean,
): TransformerConfig {
  const { copyMatchBreaks, ...model } = config.model;
  return {
    ...model,
    copyMatchBreaks: tokenIds('model.copyMatchBreaks', copyMatchBreaks, vocabulary),
    vocabSize: vocabulary.vocabSize,
    seed: config.seed,
    valueHead,
    device: config.backend,
  };
}

/** The ids of a comma-separated list of tokens, each of which must encode to exactly one token. */
function tokenIds(key: string, list: string, vocabulary: ModelVocabulary): number[] {
  const tokens = list.split(',').filter((t) => t.trim() !== '');
  return tokens.map((token) => {
    const ids = vocabulary.codec.encode(token);
    if (ids.length !== 1)
      throw new Error(`${key}: "${token}" is ${ids.length} tokens of the task's tokenizer, not one`);
    return ids[0];
  });
}

export function buildPolicy(config: TrainConfig, vocabulary: ModelVocabulary): TransformerLM {
  const sharedCritic = config.algorithm.name === 'ppo' && config.critic.shareTrunk;
  return new TransformerLM(policyConfig(config, vocabulary, sharedCritic));
}

/** A separate critic (PPO without a shared trunk): the same architecture with a value head. */
export function buildCritic(config: TrainConfig, vocabulary: ModelVocabulary): TransformerLM | null {
  if (config.algorithm.name !== 'ppo' || config.critic.shareTrunk) return null;
  return new TransformerLM({ ...policyConfig(config, vocabulary, true), seed: config.seed + 1 });
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

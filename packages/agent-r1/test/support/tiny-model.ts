import { join } from 'node:path';

/** Config overrides for the smallest policy the trainer tests use: one layer of width 16, 16 tokens. */
export const TINY_MODEL = [
  'model.dModel=16',
  'model.layers=1',
  'model.heads=2',
  'model.kvHeads=1',
  'model.maxLength=16',
];

/** The tiny policy on the reveal task, its episodes within the model's 16 tokens. */
export const TINY_REVEAL = [
  'task=reveal',
  ...TINY_MODEL,
  'rollout.maxTurns=3',
  'rollout.maxTokensPerTurn=4',
  'rollout.maxLength=16',
  'rollout.maxObservationTokens=4',
];

/** A few steps of warm start and RL on small batches: a whole run in a second or two. */
export const TINY_STAGES = [
  'sft.demonstrations=8',
  'sft.batchSize=4',
  'train.promptsPerStep=2',
  'train.miniBatchSize=8',
  'train.microBatchSize=4',
];

/**
 * A whole tiny run on one thread (so that runs compare to the bit), writing under `dir`: two warm-start
 * steps, a KL reference, no periodic validation, no progress output. Add the RL steps and the resume flag.
 */
export const tinyRun = (dir: string): string[] => [
  ...TINY_REVEAL,
  ...TINY_STAGES,
  'threads=1',
  'sft.steps=2',
  'algorithm.klCoef=0.1',
  'eval.every=0',
  `checkpoint.dir=${join(dir, 'checkpoints')}`,
  `log.dir=${dir}`,
  'log.progress=none',
];

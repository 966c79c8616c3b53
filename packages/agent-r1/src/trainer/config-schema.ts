/** Validating a training config: its keys against the schema, then the relations between keys. */
import { ConfigError, show, validateOptions } from '../options/validate.js';
import { type PartialTrainConfig, type TrainConfig, TrainConfigSchema } from './config-definition.js';

/** Relations between keys, checked on the merged config. */
function checkRelations(c: TrainConfig): void {
  const rel = (key: string, message: string) => new ConfigError(`${show(key)} ${message}`, key);
  if (c.model.dModel % c.model.heads !== 0)
    throw rel('model.dModel', `(${c.model.dModel}) must be a multiple of "model.heads" (${c.model.heads})`);
  if (c.model.heads % c.model.kvHeads !== 0)
    throw rel('model.heads', `(${c.model.heads}) must be a multiple of "model.kvHeads" (${c.model.kvHeads})`);
  for (const key of ['copyMatch', 'copySourceGate'] as const)
    if (c.model[key] && !c.model.copyHead) throw rel(`model.${key}`, 'needs "model.copyHead"');
  if (c.model.copyMatchSpan && !c.model.copyMatch)
    throw rel('model.copyMatchSpan', 'needs "model.copyMatch"');
  if (c.model.from !== '' && c.model.copyHead)
    throw rel('model.copyHead', 'cannot be added to a pretrained model ("model.from")');
  if (c.rollout.maxLength > c.model.maxLength)
    throw rel(
      'rollout.maxLength',
      `(${c.rollout.maxLength}) must be <= "model.maxLength" (${c.model.maxLength})`,
    );
  if (c.rollout.maxTokensPerTurn > c.rollout.maxLength)
    throw rel(
      'rollout.maxTokensPerTurn',
      `(${c.rollout.maxTokensPerTurn}) must be <= "rollout.maxLength" (${c.rollout.maxLength})`,
    );
  if (c.algorithm.dualClip !== 0 && !(c.algorithm.dualClip > 1))
    throw rel('algorithm.dualClip', `must be 0 (off) or a number > 1, got ${show(c.algorithm.dualClip)}`);
  // Only a stage that runs: a short model needs no shorter windows while pretraining is off.
  if (c.pretrain.steps > 0 && c.pretrain.length > c.model.maxLength)
    throw rel(
      'pretrain.length',
      `(${c.pretrain.length}) must be <= "model.maxLength" (${c.model.maxLength})`,
    );
  if (c.train.microBatchSize > c.train.miniBatchSize)
    throw rel(
      'train.microBatchSize',
      `(${c.train.microBatchSize}) must be <= "train.miniBatchSize" (${c.train.miniBatchSize})`,
    );
  if (c.eval.samples > 1 && c.eval.temperature === 0)
    throw rel('eval.samples', `(${c.eval.samples}) needs "eval.temperature" above 0: greedy episodes repeat`);
  traceStepRange(c.log.traceSteps);
}

/** "first-last", "n" or '' (every step) → the inclusive range of steps. */
export function traceStepRange(spec: string): [number, number] {
  if (spec.trim() === '') return [1, Number.POSITIVE_INFINITY];
  const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(spec);
  const first = Number(match?.[1]);
  const last = match?.[2] === undefined ? first : Number(match[2]);
  if (!match || first < 1 || last < first)
    throw new ConfigError(
      `log.traceSteps must be "first-last" or one step (steps count from 1), got "${spec}"`,
      'log.traceSteps',
    );
  return [first, last];
}

/**
 * Validates a complete config (types, ranges, enums, unknown keys, relations between keys). The task's
 * options are checked when the task is resolved (`resolveConfig`, `createTask`), against its own schema.
 */
export function validateConfig(config: unknown): TrainConfig {
  const c = validateOptions<TrainConfig>(TrainConfigSchema, config);
  checkRelations(c);
  return c;
}

/** Validates a partial config (a preset, a file's contents). */
export function validatePartialConfig(partial: unknown): PartialTrainConfig {
  return validateOptions<PartialTrainConfig>(TrainConfigSchema, partial, { partial: true });
}

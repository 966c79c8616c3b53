/**
 * A tiny agent training run (task reveal: a warm start of 3 steps with context loss, then 2 GRPO steps with
 * a KL penalty, rollouts over the KV cache) on a given backend, and the numbers a cross-backend test
 * compares: each warm-start step's losses and each RL step's entropy, KL penalty, policy loss, gradient
 * norm and action tokens (which differ if any sampled token does).
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { prepareBackend } from '../../src/trainer/backend-setup.js';
import { resolveConfig } from '../../src/trainer/config.js';
import { readMetrics } from '../../src/trainer/metrics-log.js';
import { createTask } from '../../src/tasks/index.js';
import { trainAgent } from '../../src/trainer/trainer.js';
import { WARM_START_METRICS } from '../../src/trainer/warm-start.js';
import { TINY_REVEAL, TINY_STAGES } from './tiny-model.js';

export interface TinyRunNumbers {
  warmStart: number[][];
  rl: number[][];
}

export async function runTinyAgent(
  root: string,
  backend: string,
  overrides: string[] = [],
): Promise<TinyRunNumbers> {
  const config = resolveConfig({
    overrides: [
      ...TINY_REVEAL,
      ...TINY_STAGES,
      'sft.steps=3',
      'sft.contextWeight=0.5',
      'train.steps=2',
      'algorithm.klCoef=0.1',
      // Every reward of so short a warm start is 0, so GRPO's advantages are too: the entropy bonus gives
      // the updates a gradient to compare, and the policy moves away from the KL's reference.
      'algorithm.entropyCoef=0.01',
      'eval.every=0',
      ...overrides,
      `backend=${backend}`,
      `checkpoint.dir=${join(root, backend, 'checkpoints')}`,
      `log.dir=${join(root, backend)}`,
      'log.progress=none',
    ],
  });
  await prepareBackend(config);
  const result = await trainAgent(config, await createTask(config));
  result.policy.dispose();
  return {
    warmStart: readMetrics(join(config.log.dir, WARM_START_METRICS)).map((m) => [
      m.sftLoss,
      m.sftContextLoss,
    ]),
    rl: result.metrics.map((m) => [m.entropy, m.rewardKl, m.policyLoss, m.gradNorm, m.actionTokens]),
  };
}

/** Expects two runs' numbers to agree to `digits` decimal places, each step and number named. */
export function expectSameRun(reference: TinyRunNumbers, other: TinyRunNumbers, digits: number): void {
  for (const key of ['warmStart', 'rl'] as const) {
    expect(other[key], key).toHaveLength(reference[key].length);
    for (const [i, row] of reference[key].entries())
      for (const [j, v] of row.entries()) expect(other[key][i][j], `${key} ${i} ${j}`).toBeCloseTo(v, digits);
  }
}

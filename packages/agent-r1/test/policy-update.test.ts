/**
 * The update accumulates a mini-batch's gradient over micro-batches grouped by length: how the rows are cut
 * into micro-batches must not change the loss or the gradient beyond rounding, for every aggregation, with
 * the KL and entropy terms, and with PPO's value loss.
 */
import { AdamW, TransformerLM } from '@agent-r1/nn';
import { Generator } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import { byLength } from '../src/algorithms/batch.js';
import { LOSS_AGGREGATIONS } from '../src/algorithms/losses.js';
import { resolveConfig } from '../src/trainer/config.js';
import { updatePolicy } from '../src/trainer/policy-update.js';
import { randomBatch } from './support/random-batch.js';

const V = 23;

async function gradientsWith(microBatchSize: number, aggregation: string, algorithm = 'grpo') {
  const ppo = algorithm === 'ppo';
  const base = resolveConfig({
    overrides: [
      `algorithm.name=${algorithm}`,
      'algorithm.klCoef=0.1',
      'algorithm.entropyCoef=0.01',
      `algorithm.aggregation=${aggregation}`,
      'train.miniBatchSize=8',
      `train.microBatchSize=${microBatchSize}`,
    ],
  });
  const batch = randomBatch(7, 8, V, 14);
  const generator = new Generator(3);
  const random = (scale: number, offset: number) =>
    batch.actionMask.map((row) => row.map((m) => (m ? offset + scale * generator.random() : 0)));
  const advantages = random(1, -0.5);
  const refLogprobs = random(1, -2);
  const policy = new TransformerLM({
    vocabSize: V,
    dModel: 16,
    layers: 1,
    heads: 2,
    maxLength: 24,
    valueHead: ppo,
    dtype: 'float64',
    seed: 1,
  });
  const optimizer = new AdamW(policy.parameters(), { lr: 0 });
  const metrics = await updatePolicy(
    base,
    { policy, optimizer, critic: null, criticOptimizer: null },
    { batch, advantages, returns: advantages, refLogprobs, oldValues: ppo ? random(1, -0.5) : null },
    new Generator(5),
    0,
  );
  // lr 0: the parameters stay; the gradients of the (one) mini-batch are left on them.
  const grads = policy.parameters().map((p) => Array.from(p.grad!.dataSync()));
  optimizer.dispose();
  policy.dispose();
  return { metrics, grads, lengths: batch.lengths };
}

describe('updatePolicy', () => {
  it('orders a mini-batch shortest first', () => {
    const batch = randomBatch(7, 8, V, 14);
    const order = byLength(batch, [0, 1, 2, 3, 4, 5, 6, 7]);
    expect([...order].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (let i = 1; i < order.length; i++)
      expect(batch.lengths[order[i]]).toBeGreaterThanOrEqual(batch.lengths[order[i - 1]]);
  });

  it.each(LOSS_AGGREGATIONS.flatMap((aggregation) => ['grpo', 'ppo'].map((name) => [aggregation, name])))(
    'gives the mini-batch’s loss and gradient whatever the micro-batches (%s, %s)',
    async (aggregation, name) => {
      const whole = await gradientsWith(8, aggregation, name);
      expect(new Set(whole.lengths).size).toBeGreaterThan(3);
      for (const micro of [1, 3]) {
        const parts = await gradientsWith(micro, aggregation, name);
        for (const key of ['policyLoss', 'entropy', 'klLoss', 'valueLoss', 'gradNorm'] as const)
          expect(parts.metrics[key]).toBeCloseTo(whole.metrics[key], 12);
        expect(whole.metrics.gradNorm).toBeGreaterThan(0);
        expect(whole.metrics.klLoss).toBeGreaterThan(0);
        if (name === 'ppo') expect(whole.metrics.valueLoss).toBeGreaterThan(0);
        for (const [i, g] of parts.grads.entries())
          for (const [j, x] of g.entries()) expect(x).toBeCloseTo(whole.grads[i][j], 12);
      }
    },
  );
});

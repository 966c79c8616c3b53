/**
 * The update phase of an RL step: several epochs over shuffled mini-batches of the rollout batch, each
 * mini-batch one optimizer step, accumulated over micro-batches. The policy loss is PPO's clipped surrogate
 * (for every algorithm: with one epoch and on-policy data it is the plain policy gradient), plus the KL loss
 * to the reference and the entropy bonus; PPO also fits the critic.
 */
import { type AdamW, type TransformerLM, clipGradNormAsync } from '@agent-r1/nn';
import { type Generator, type Tensor, tidy } from '@agent-r1/tensor';
import type { TrajectoryBatch } from '../algorithms/batch.js';
import { byLength, lossRows, rowsToTensor } from '../algorithms/batch.js';
import { aggregateLoss, klLoss, lossMask, maskCounts, ppoLoss, valueLoss } from '../algorithms/losses.js';
import type { TrainConfig } from './config.js';
import { randomPermutation } from './permutation.js';
import { readScalars } from './read-scalars.js';
import { sequenceForward } from './sequence.js';

export interface UpdateInputs {
  batch: TrajectoryBatch;
  advantages: Float64Array[];
  returns: Float64Array[];
  /** Reference log-probs per token when the KL loss is on. */
  refLogprobs: Float64Array[] | null;
  /** Critic values at rollout time (PPO). */
  oldValues: Float64Array[] | null;
}

export interface UpdateModels {
  policy: TransformerLM;
  optimizer: AdamW;
  /** A separate critic (PPO without a shared trunk), with its optimizer. */
  critic: TransformerLM | null;
  criticOptimizer: AdamW | null;
}

export interface UpdateMetrics {
  policyLoss: number;
  clipFraction: number;
  approxKl: number;
  entropy: number;
  klLoss: number;
  valueLoss: number;
  gradNorm: number;
}

function chunks<T>(xs: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

/** Runs the update phase and returns the metrics averaged over mini-batches. */
export async function updatePolicy(
  config: TrainConfig,
  models: UpdateModels,
  inputs: UpdateInputs,
  generator: Generator,
  lr: number,
): Promise<UpdateMetrics> {
  const { algorithm, train } = config;
  const { batch } = inputs;
  const temperature = config.rollout.temperature > 0 ? config.rollout.temperature : 1;
  const isPpo = algorithm.name === 'ppo';
  // Only the tokens in the loss get logits (the policy's actions, or the whole response without the mask).
  const needed = lossRows(batch, algorithm.useActionMask);
  const sums: UpdateMetrics = {
    policyLoss: 0,
    clipFraction: 0,
    approxKl: 0,
    entropy: 0,
    klLoss: 0,
    valueLoss: 0,
    gradNorm: 0,
  };
  let updates = 0;
  const { dtype, device } = models.policy.config;
  const pick = (rows: readonly ArrayLike<number>[], idx: readonly number[]) =>
    rowsToTensor(
      idx.map((i) => rows[i]),
      { dtype, device },
    );
  for (let epoch = 0; epoch < train.ppoEpochs; epoch++) {
    for (const mini of chunks(randomPermutation(batch.size, generator), train.miniBatchSize)) {
      models.optimizer.zeroGrad();
      models.criticOptimizer?.zeroGrad();
      // Micro-batches of rows of like length, each run to its own longest row; their losses divide by the
      // mini-batch's counts, so that they add up to its loss, the same sums grouped otherwise.
      const batchCounts = maskCounts(mini.map((i) => needed[i]));
      for (const micro of chunks(byLength(batch, mini), train.microBatchSize)) {
        const scalars = tidy(() => {
          const out = sequenceForward(models.policy, batch, micro, {
            temperature,
            needed,
            entropy: true,
          });
          const masks = {
            actionMask: pick(batch.actionMask, micro),
            responseMask: pick(batch.responseMask, micro),
            useActionMask: algorithm.useActionMask,
            aggregation: algorithm.aggregation,
            batchCounts,
          };
          const ppo = ppoLoss({
            ...masks,
            logprobs: out.logprobs,
            oldLogprobs: pick(batch.oldLogprobs, micro),
            advantages: pick(inputs.advantages, micro),
            clipRatioLow: algorithm.clipRatio,
            clipRatioHigh: algorithm.clipRatioHigh,
            dualClip: algorithm.dualClip > 0 ? algorithm.dualClip : null,
          });
          let loss: Tensor = ppo.loss;
          let kl: Tensor | undefined;
          if (inputs.refLogprobs && !algorithm.klInReward && algorithm.klCoef > 0) {
            kl = klLoss({
              ...masks,
              logprobs: out.logprobs,
              refLogprobs: pick(inputs.refLogprobs, micro),
              estimator: algorithm.klType,
            });
            loss = loss.add(kl.mul(algorithm.klCoef));
          }
          const entropy = aggregateLoss(out.entropy!, lossMask(masks), algorithm.aggregation, batchCounts);
          if (algorithm.entropyCoef > 0) loss = loss.sub(entropy.mul(algorithm.entropyCoef));
          let vLoss: Tensor | undefined;
          if (isPpo) {
            const values = models.critic
              ? sequenceForward(models.critic, batch, micro, { needed }).values
              : out.values;
            if (!values || !inputs.oldValues) throw new Error('updatePolicy: PPO needs a value head');
            vLoss = valueLoss({
              ...masks,
              values,
              oldValues: pick(inputs.oldValues, micro),
              returns: pick(inputs.returns, micro),
              clipRange: algorithm.valueClip > 0 ? algorithm.valueClip : Number.POSITIVE_INFINITY,
            }).loss;
            loss = loss.add(vLoss.mul(algorithm.valueCoef));
          }
          loss.backward();
          return {
            policyLoss: ppo.loss,
            clipFraction: ppo.clipFraction,
            approxKl: ppo.approxKl,
            entropy,
            kl,
            vLoss,
          };
        });
        const m = await readScalars(scalars);
        sums.policyLoss += m.policyLoss ?? 0;
        sums.clipFraction += m.clipFraction ?? 0;
        sums.approxKl += m.approxKl ?? 0;
        sums.entropy += m.entropy ?? 0;
        sums.klLoss += m.kl ?? 0;
        sums.valueLoss += m.vLoss ?? 0;
      }
      // gradClip 0: no clipping, but the norm is still measured for the metrics.
      const maxNorm = train.gradClip > 0 ? train.gradClip : Number.MAX_VALUE;
      sums.gradNorm += await clipGradNormAsync(models.policy.parameters(), maxNorm);
      models.optimizer.step(lr);
      if (models.critic && models.criticOptimizer) {
        await clipGradNormAsync(models.critic.parameters(), maxNorm);
        models.criticOptimizer.step();
      }
      updates++;
    }
  }
  for (const key of Object.keys(sums) as (keyof UpdateMetrics)[]) sums[key] /= Math.max(updates, 1);
  return sums;
}

/** Supervised warm start: maximise the log-likelihood of demonstration actions (observations are masked). */
import { type AdamW, type TransformerLM, clipGradNorm } from '@agent-r1/nn';
import { tidy } from '@agent-r1/tensor';
import { buildBatch, rowsToTensor } from '../algorithms/batch.js';
import { aggregateLoss } from '../algorithms/losses.js';
import type { Trajectory } from '../mdp/trajectory.js';
import { sequenceForward } from './sequence.js';

export interface SftOptions {
  microBatchSize: number;
  gradClip: number;
  lr?: number;
}

/** One optimizer step on a batch of demonstrations; returns the mean negative log-likelihood per action token. */
export function sftStep(
  policy: TransformerLM,
  optimizer: AdamW,
  demos: readonly Trajectory[],
  options: SftOptions,
): number {
  const batch = buildBatch(demos);
  const actionTokens = batch.actionMask.reduce((n, row) => n + row.reduce((a, b) => a + b, 0), 0);
  optimizer.zeroGrad();
  let total = 0;
  for (let start = 0; start < batch.size; start += options.microBatchSize) {
    const rows = Array.from(
      { length: Math.min(options.microBatchSize, batch.size - start) },
      (_, i) => start + i,
    );
    total += tidy(() => {
      const { logprobs } = sequenceForward(policy, batch, rows, 1);
      const mask = rowsToTensor(
        rows.map((r) => batch.actionMask[r]),
        { dtype: policy.config.dtype },
      );
      // Sum over this micro-batch's action tokens, divided by the whole batch's: a token-mean over the batch.
      const nll = aggregateLoss(logprobs.neg(), mask, 'seq-mean-token-sum').mul(rows.length / actionTokens);
      nll.backward();
      return nll.itemSync();
    });
  }
  clipGradNorm(policy.parameters(), options.gradClip > 0 ? options.gradClip : Number.MAX_VALUE);
  optimizer.step(options.lr);
  return total;
}

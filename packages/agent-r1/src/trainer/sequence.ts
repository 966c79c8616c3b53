/**
 * One batched forward pass of the policy (or critic) over trajectories, giving per-token quantities in the
 * token layout of TrajectoryBatch: column t holds the log-probability of token t given tokens < t, and the
 * value of that state (tokens < t), as verl aligns them; column 0, which nothing predicts, is 0.
 */
import type { TransformerLM } from '@agent-r1/nn';
import { type Tensor, concat, logprobs as gatherLogprobs, tensor, tidy, zeros } from '@agent-r1/tensor';
import type { TrajectoryBatch } from '../algorithms/batch.js';

export interface SequenceOutputs {
  /** [n, L] log-probs of each token (0 in column 0). */
  logprobs: Tensor;
  /** [n, L - 1, V] temperature-scaled logits predicting tokens 1..L-1 (for the entropy bonus). */
  logits: Tensor;
  /** [n, L] values V(tokens < t) when the model has a value head. */
  values: Tensor | null;
}

/** Rows `rows` of the batch, as the model's int32 input. */
export function batchIds(batch: TrajectoryBatch, rows: readonly number[], device?: string): Tensor {
  const L = batch.length;
  const data = new Int32Array(rows.length * L);
  for (const [i, r] of rows.entries()) data.set(batch.tokens[r], i * L);
  return tensor(data, { shape: [rows.length, L], device });
}

/** Runs `model` on rows of the batch (gradients flow unless called under noGrad). */
export function sequenceForward(
  model: TransformerLM,
  batch: TrajectoryBatch,
  rows: readonly number[],
  temperature: number,
): SequenceOutputs {
  return tidy(() => {
    const L = batch.length;
    const ids = batchIds(batch, rows, model.config.device);
    const lengths = rows.map((r) => batch.lengths[r]);
    const inputs = ids.narrow(1, 0, L - 1);
    const targets = ids.narrow(1, 1, L - 1).contiguous();
    const { logits: raw, values } = model.forward(inputs.contiguous(), {
      lengths: lengths.map((n) => Math.max(0, n - 1)),
    });
    const logits = temperature === 1 ? raw : raw.div(temperature);
    const lp = gatherLogprobs(logits, targets);
    const first = zeros([rows.length, 1], { dtype: lp.dtype, device: lp.device });
    const fullValues = values ? concat([first, values], 1) : null;
    return { logprobs: concat([first, lp], 1), logits, values: fullValues };
  });
}

import { type Tensor, tidy } from '@agent-r1/tensor';

export interface AccumulateOptions {
  /**
   * Relative weight of each micro-batch (e.g. its number of examples, when they differ); the default weighs
   * them equally. Each loss is back-propagated scaled by weight / Σ weights.
   */
  weights?: readonly number[];
}

/**
 * Gradient accumulation: runs `lossFn` on each micro-batch and back-propagates its loss scaled by 1/k (k
 * micro-batches), so that the `.grad` of every parameter ends up as the gradient of the mean loss over the
 * whole batch (for a loss that is a mean over equal micro-batches). Gradients add up in `.grad` on top of
 * whatever is there: call `optimizer.zeroGrad()` before and `optimizer.step()` after. Each micro-batch runs
 * in its own tidy scope, so only one micro-batch's activations are alive at a time. Returns the weighted
 * mean loss.
 *
 *   optimizer.zeroGrad();
 *   const loss = accumulateGradients(chunks, (c) => crossEntropy(model.forward(c.x), c.y));
 *   optimizer.step();
 */
export function accumulateGradients<B>(
  microBatches: readonly B[],
  lossFn: (batch: B, index: number) => Tensor,
  options: AccumulateOptions = {},
): number {
  const k = microBatches.length;
  if (k === 0) throw new Error('accumulateGradients: no micro-batches');
  const weights = options.weights ?? microBatches.map(() => 1);
  if (weights.length !== k || weights.some((w) => !(w >= 0) || !Number.isFinite(w)))
    throw new Error(`accumulateGradients: need ${k} finite weights >= 0, got [${weights.join(', ')}]`);
  const total = weights.reduce((a, b) => a + b, 0);
  if (total <= 0) throw new Error('accumulateGradients: the weights add up to 0');
  let mean = 0;
  microBatches.forEach((batch, i) => {
    mean += tidy(() => {
      const loss = lossFn(batch, i);
      if (loss.size !== 1)
        throw new Error(
          `accumulateGradients: micro-batch ${i}'s loss has shape [${loss.shape}], not a scalar`,
        );
      loss.mul(weights[i] / total).backward();
      return (loss.itemSync() * weights[i]) / total;
    });
  });
  return mean;
}

/**
 * Policy-gradient losses as tensor ops, so gradients reach the new log-probs, logits and values. Every
 * input is [N, L] (logits [N, L, V]), indexed like batch.ts. Every loss keeps only the masked tokens and
 * aggregates them as verl's agg_loss does; masked-out tokens contribute nothing, not even NaN (they are
 * selected away with `where`, not multiplied by 0). Metrics are scalar tensors too, left on the device: the
 * caller reads them when and how its backend allows (WebGPU's reads are promises).
 */
import { type Tensor, maximum, minimum, noGrad, tidy, where, zeros } from '@agent-r1/tensor';
import type { KlEstimator } from './advantages.js';

/**
 * How per-token losses become one number (verl's loss_agg_mode):
 * - 'token-mean': Σ masked loss / number of masked tokens in the batch;
 * - 'seq-mean-token-sum': each row's Σ masked loss, averaged over the rows that have masked tokens;
 * - 'seq-mean-token-mean': each row's mean over its masked tokens, averaged over the rows that have any.
 * An empty mask gives 0.
 */
export const LOSS_AGGREGATIONS = ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'] as const;
export type LossAggregation = (typeof LOSS_AGGREGATIONS)[number];

export interface LossMaskOptions {
  /** [N, L] 1 on the policy's action tokens: the tokens every loss trains on. */
  actionMask: Tensor;
  /**
   * Default true. `false` exists ONLY for the paper's ablation that puts observation tokens in the loss:
   * the mask then becomes `responseMask` (every non-padding token after the prompt), which must be given.
   * Old log-probs (and values) must then cover observation tokens too. Do not use it to train.
   */
  useActionMask?: boolean;
  /** [N, L] 1 on every non-padding token after the prompt (TrajectoryBatch.responseMask); ablation only. */
  responseMask?: Tensor;
  /** Default 'token-mean'. */
  aggregation?: LossAggregation;
  /**
   * When these tensors are one micro-batch of a larger batch (gradient accumulation): that batch's counts,
   * which the aggregation divides by instead of the micro-batch's own, so that the micro-batches' losses
   * add up to the batch's loss however its rows are grouped. Default: the tensors' own counts.
   */
  batchCounts?: MaskCounts;
}

/** What an aggregation divides by: masked tokens ('token-mean') and rows with any ('seq-mean-*'). */
export interface MaskCounts {
  tokens: number;
  rows: number;
}

/** The counts of a batch's mask rows, on the host (e.g. a mini-batch's, before its micro-batches run). */
export function maskCounts(rows: readonly ArrayLike<number>[]): MaskCounts {
  let tokens = 0;
  let nonEmpty = 0;
  for (const row of rows) {
    let n = 0;
    for (let t = 0; t < row.length; t++) if (row[t] !== 0) n++;
    tokens += n;
    if (n > 0) nonEmpty++;
  }
  return { tokens, rows: nonEmpty };
}

/** The mask a loss uses: the action mask, or the response mask in the useActionMask: false ablation. */
export function lossMask(options: LossMaskOptions): Tensor {
  if (options.useActionMask ?? true) return options.actionMask;
  if (!options.responseMask)
    throw new Error('useActionMask: false (the observation-tokens ablation) needs a responseMask');
  return options.responseMask;
}

/**
 * Aggregates a per-token loss [..., L] over the non-zero entries of mask (same shape), dividing by
 * `batchCounts` when given (see LossMaskOptions) rather than by the mask's own counts.
 */
export function aggregateLoss(
  lossMat: Tensor,
  mask: Tensor,
  mode: LossAggregation = 'token-mean',
  batchCounts?: MaskCounts,
): Tensor {
  return tidy(() => {
    const keep = mask.dtype === 'bool' ? mask : mask.ne(0);
    const weight = keep.cast(lossMat.dtype);
    const masked = where(keep, lossMat, 0);
    if (mode === 'token-mean')
      return masked.sum().div(batchCounts ? Math.max(batchCounts.tokens, 1) : weight.sum().maximum(1));
    const counts = weight.sum(-1);
    const rows = batchCounts
      ? Math.max(batchCounts.rows, 1)
      : counts.gt(0).cast(lossMat.dtype).sum().maximum(1);
    const rowSums = masked.sum(-1);
    if (mode === 'seq-mean-token-sum') return rowSums.sum().div(rows);
    if (mode === 'seq-mean-token-mean') return rowSums.div(counts.maximum(1)).sum().div(rows);
    throw new Error(`aggregateLoss: unknown aggregation mode '${mode as string}'`);
  });
}

/** Token-mean of a per-token quantity over the mask, a scalar without gradient (for metrics). */
function maskedMetric(values: Tensor, mask: Tensor, batchCounts: MaskCounts | undefined): Tensor {
  return noGrad(() => tidy(() => aggregateLoss(values, mask, 'token-mean', batchCounts)));
}

export interface PpoLossOptions extends LossMaskOptions {
  /** [N, L] log-probs of the sampled tokens under the current policy (what the gradient flows to). */
  logprobs: Tensor;
  /** [N, L] behaviour log-probs (TrajectoryBatch.oldLogprobs). */
  oldLogprobs: Tensor;
  /** [N, L] advantages. */
  advantages: Tensor;
  /** ε of the clip range (default 0.2); clipRatioLow/High override either side (DAPO's clip-higher). */
  clipRatio?: number;
  clipRatioLow?: number;
  clipRatioHigh?: number;
  /**
   * Dual clip c > 1 (Ye et al. 2020): for A < 0 the loss is capped at −A·c. Default 3 (verl's clip_ratio_c);
   * null turns it off.
   */
  dualClip?: number | null;
}

export interface PpoLossResult {
  /** Scalar loss to minimise. */
  loss: Tensor;
  /** Scalar: fraction of masked tokens where the clipped term is the one taken (verl's pg_clipfrac). */
  clipFraction: Tensor;
  /** Scalar: fraction of masked tokens where the dual clip caps the loss (verl's pg_clipfrac_lower). */
  dualClipFraction: Tensor;
  /**
   * Scalar: approximate KL(π_old ‖ π) over the masked tokens, the k3 estimator: mean of r − 1 − log r with
   * r = π/π_old (always ≥ 0, unbiased under samples from π_old).
   */
  approxKl: Tensor;
}

/**
 * PPO clipped surrogate: r = exp(logp − logp_old) (log-ratio clamped to ±20 as in verl),
 * loss_t = max(−A·r, −A·clip(r, 1 − ε_low, 1 + ε_high)), then for A < 0 min(that, −A·c) (dual clip),
 * aggregated over the mask. Where the loss is unclipped, d loss_t / d logp_t = −A·r; where clipped, 0.
 */
export function ppoLoss(options: PpoLossOptions): PpoLossResult {
  const { logprobs, oldLogprobs, advantages, aggregation = 'token-mean', batchCounts } = options;
  const epsLow = options.clipRatioLow ?? options.clipRatio ?? 0.2;
  const epsHigh = options.clipRatioHigh ?? options.clipRatio ?? 0.2;
  const dualClip = options.dualClip === undefined ? 3 : options.dualClip;
  if (dualClip !== null && !(dualClip > 1))
    throw new Error(`ppoLoss: the dual-clip constant must be > 1, got ${dualClip}`);
  const mask = lossMask(options);
  return tidy(() => {
    const logRatio = logprobs.sub(oldLogprobs).clamp(-20, 20);
    const ratio = logRatio.exp();
    const negAdv = advantages.neg();
    const unclipped = negAdv.mul(ratio);
    const clipped = negAdv.mul(ratio.clamp(1 - epsLow, 1 + epsHigh));
    const clipLoss = maximum(unclipped, clipped);
    let perToken = clipLoss;
    let dualClipFraction: Tensor;
    if (dualClip !== null) {
      const cap = negAdv.mul(dualClip);
      const negative = advantages.lt(0);
      perToken = where(negative, minimum(clipLoss, cap), clipLoss);
      dualClipFraction = maskedMetric(
        noGrad(() => negative.cast(ratio.dtype).mul(clipLoss.gt(cap).cast(ratio.dtype))),
        mask,
        batchCounts,
      );
    } else dualClipFraction = zeros([], { dtype: ratio.dtype, device: ratio.device });
    const clipFraction = maskedMetric(
      noGrad(() => clipped.gt(unclipped).cast(ratio.dtype)),
      mask,
      batchCounts,
    );
    const approxKl = maskedMetric(
      noGrad(() => ratio.sub(1).sub(logRatio)),
      mask,
      batchCounts,
    );
    const loss = aggregateLoss(perToken, mask, aggregation, batchCounts);
    return { loss, clipFraction, dualClipFraction, approxKl };
  });
}

/**
 * Per-token KL between the policy and a reference from log-probs of the sampled tokens (verl's kl_penalty):
 * 'k1' logp − ref; 'k2' ½(logp − ref)²; 'k3' = 'low_var_kl' e^{ref−logp} − (ref − logp) − 1 with
 * ref − logp clamped to ±20 and the result to ±10, as verl does.
 */
export function klDivergence(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator = 'k1'): Tensor {
  return tidy(() => {
    switch (estimator) {
      case 'k1':
        return logprobs.sub(refLogprobs);
      case 'k2':
        return logprobs.sub(refLogprobs).square().mul(0.5);
      case 'k3':
      case 'low_var_kl': {
        const kl = refLogprobs.sub(logprobs).clamp(-20, 20);
        return kl.exp().sub(kl).sub(1).clamp(-10, 10);
      }
      default:
        throw new Error(`klDivergence: unknown estimator '${estimator as string}'`);
    }
  });
}

export interface KlLossOptions extends LossMaskOptions {
  logprobs: Tensor;
  refLogprobs: Tensor;
  /** Default 'low_var_kl' (= 'k3'), verl's default kl_loss_type. */
  estimator?: KlEstimator;
}

/** KL to the reference policy as a loss term: per-token klDivergence, masked and aggregated. */
export function klLoss(options: KlLossOptions): Tensor {
  const {
    logprobs,
    refLogprobs,
    estimator = 'low_var_kl',
    aggregation = 'token-mean',
    batchCounts,
  } = options;
  const mask = lossMask(options);
  return tidy(() =>
    aggregateLoss(klDivergence(logprobs, refLogprobs, estimator), mask, aggregation, batchCounts),
  );
}

/** Entropy −Σ_v p_v log p_v of the distribution at each position: logits [..., V] → [...]. */
export function tokenEntropy(logits: Tensor): Tensor {
  return tidy(() => {
    const logp = logits.logSoftmax(-1);
    return logp.exp().mul(logp).sum(-1).neg();
  });
}

export interface EntropyOptions extends LossMaskOptions {
  /** [N, L, V] logits of the policy. */
  logits: Tensor;
}

/** The policy's entropy, masked and aggregated (token-mean by default): subtract coef · this for a bonus. */
export function policyEntropy(options: EntropyOptions): Tensor {
  const { logits, aggregation = 'token-mean', batchCounts } = options;
  const mask = lossMask(options);
  return tidy(() => aggregateLoss(tokenEntropy(logits), mask, aggregation, batchCounts));
}

export interface ValueLossOptions extends LossMaskOptions {
  /** [N, L] the critic's current predictions (what the gradient flows to). */
  values: Tensor;
  /** [N, L] the critic's predictions at rollout time. */
  oldValues: Tensor;
  /** [N, L] targets (the GAE returns). */
  returns: Tensor;
  /** ε_v (default 0.5, verl's cliprange_value); Infinity turns clipping off. */
  clipRange?: number;
}

export interface ValueLossResult {
  loss: Tensor;
  /** Scalar: fraction of masked tokens where the clipped error is the larger one (verl's vf_clipfrac). */
  clipFraction: Tensor;
}

/**
 * Clipped value loss: ½ · agg(max((V − R)², (V_old + clip(V − V_old, −ε_v, ε_v) − R)²)) over the mask.
 */
export function valueLoss(options: ValueLossOptions): ValueLossResult {
  const { values, oldValues, returns, clipRange = 0.5, aggregation = 'token-mean', batchCounts } = options;
  const mask = lossMask(options);
  return tidy(() => {
    const clippedValues = oldValues.add(values.sub(oldValues).clamp(-clipRange, clipRange));
    const plain = values.sub(returns).square();
    const clipped = clippedValues.sub(returns).square();
    const clipFraction = maskedMetric(
      noGrad(() => clipped.gt(plain).cast(values.dtype)),
      mask,
      batchCounts,
    );
    const loss = aggregateLoss(maximum(plain, clipped), mask, aggregation, batchCounts).mul(0.5);
    return { loss, clipFraction };
  });
}

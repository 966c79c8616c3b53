import { type Tensor, noGrad, tidy } from '@agent-r1/tensor';

export interface ClipGradNormOptions {
  /** Throw when the norm is NaN or infinite (default: return it and leave the gradients alone). */
  errorIfNonfinite?: boolean;
}

/**
 * Scales the gradients of `params` together so that their global L2 norm is at most `maxNorm` (by
 * maxNorm / (norm + 1e-6), as PyTorch does; gradients already within the bound are left as they are), and
 * returns the norm before clipping. Each gradient's sum of squares is taken in float64 and the sums are
 * added in JS doubles, so large or many gradients neither overflow nor lose precision. A non-finite norm
 * changes nothing (skip that step), unless `errorIfNonfinite` makes it throw.
 */
export function clipGradNorm(
  params: Iterable<Tensor>,
  maxNorm: number,
  options: ClipGradNormOptions = {},
): number {
  if (!(maxNorm >= 0) || !Number.isFinite(maxNorm))
    throw new Error(`clipGradNorm: maxNorm must be a finite number >= 0, got ${maxNorm}`);
  const withGrad = [...params].filter((p) => p.grad !== null);
  let sumOfSquares = 0;
  noGrad(() => {
    for (const p of withGrad) {
      const g = p.grad!;
      sumOfSquares += tidy(() => (g.dtype === 'float64' ? g : g.cast('float64')).square().sum().itemSync());
    }
  });
  const norm = Math.sqrt(sumOfSquares);
  if (!Number.isFinite(norm)) {
    if (options.errorIfNonfinite)
      throw new Error(`clipGradNorm: the gradient norm is ${norm}; some gradient holds NaN or infinity`);
    return norm;
  }
  const coef = maxNorm / (norm + 1e-6);
  if (coef < 1)
    noGrad(() => {
      for (const p of withGrad) p.setGrad(p.grad!.mul(coef));
    });
  return norm;
}

import { type Tensor, concat, noGrad, supportsDtype, tidy } from '@agent-r1/tensor';

export interface ClipGradNormOptions {
  /** Throw when the norm is NaN or infinite (default: return it and leave the gradients alone). */
  errorIfNonfinite?: boolean;
}

/**
 * Scales the gradients of `params` together so that their global L2 norm is at most `maxNorm` (by
 * maxNorm / (norm + 1e-6), as PyTorch does; gradients already within the bound are left as they are), and
 * returns the norm before clipping. Each gradient's sum of squares is taken in float64 (in float32 on a
 * backend without float64, WebGPU) and the sums are added in JS doubles, so large or many gradients neither
 * overflow nor lose precision. A non-finite norm changes nothing (skip that step), unless
 * `errorIfNonfinite` makes it throw. It reads the sums synchronously (CPU, CUDA); see clipGradNormAsync.
 */
export function clipGradNorm(
  params: Iterable<Tensor>,
  maxNorm: number,
  options: ClipGradNormOptions = {},
): number {
  const withGrad = gradientsToClip(params, maxNorm);
  if (withGrad.length === 0) return 0;
  const sums = sumsOfSquares(withGrad);
  try {
    return applyClip(withGrad, sums.dataSync(), maxNorm, options);
  } finally {
    sums.dispose();
  }
}

/** clipGradNorm on every backend (WebGPU included): the same norm, its sums read as a promise. */
export async function clipGradNormAsync(
  params: Iterable<Tensor>,
  maxNorm: number,
  options: ClipGradNormOptions = {},
): Promise<number> {
  const withGrad = gradientsToClip(params, maxNorm);
  if (withGrad.length === 0) return 0;
  const sums = sumsOfSquares(withGrad);
  try {
    return applyClip(withGrad, await sums.data(), maxNorm, options);
  } finally {
    sums.dispose();
  }
}

function gradientsToClip(params: Iterable<Tensor>, maxNorm: number): Tensor[] {
  if (!(maxNorm >= 0) || !Number.isFinite(maxNorm))
    throw new Error(`clipGradNorm: maxNorm must be a finite number >= 0, got ${maxNorm}`);
  return [...params].filter((p) => p.grad !== null);
}

/** [P] each parameter's gradient's sum of squares, in one tensor on their device (so one read). */
function sumsOfSquares(withGrad: readonly Tensor[]): Tensor {
  const device = withGrad[0].grad!.device;
  const dtype = supportsDtype(device, 'float64') ? 'float64' : 'float32';
  return noGrad(() =>
    tidy(() => concat(withGrad.map((p) => p.grad!.cast(dtype).square().sum().reshape([1])))),
  );
}

function applyClip(
  withGrad: readonly Tensor[],
  sums: ArrayLike<number>,
  maxNorm: number,
  options: ClipGradNormOptions,
): number {
  let sumOfSquares = 0;
  for (let i = 0; i < sums.length; i++) sumOfSquares += sums[i];
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

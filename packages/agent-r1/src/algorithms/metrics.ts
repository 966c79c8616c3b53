/**
 * Masked statistics over padded per-token arrays [N, L] (one row per trajectory), shared by the advantage
 * estimators and the trainer's metrics. A mask entry counts when it is non-zero; masks are 0/1 in practice.
 * Conventions follow verl (verl/utils/torch_functional.py): variances are unbiased (Bessel-corrected) and
 * whitening divides by sqrt(var + eps).
 */

/** Padded per-token values, one row per trajectory: Float64Array rows or plain number arrays. */
export type TokenRows = readonly ArrayLike<number>[];

function checkRows(what: string, values: TokenRows, mask: TokenRows): void {
  if (values.length !== mask.length)
    throw new Error(`${what}: ${values.length} value rows but ${mask.length} mask rows`);
  for (let i = 0; i < values.length; i++) {
    if (values[i].length !== mask[i].length)
      throw new Error(
        `${what}: row ${i} has ${values[i].length} values but its mask has ${mask[i].length} entries`,
      );
  }
}

/** How many entries the mask keeps. */
export function maskedCount(mask: TokenRows): number {
  let n = 0;
  for (const row of mask) for (let t = 0; t < row.length; t++) if (row[t] !== 0) n++;
  return n;
}

/** Sum of the values the mask keeps. */
export function maskedSum(values: TokenRows, mask: TokenRows): number {
  checkRows('maskedSum', values, mask);
  let s = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const m = mask[i];
    for (let t = 0; t < v.length; t++) if (m[t] !== 0) s += v[t];
  }
  return s;
}

/** Mean of the values the mask keeps; 0 when it keeps none (verl divides by count + 1e-8, also 0). */
export function maskedMean(values: TokenRows, mask: TokenRows): number {
  const n = maskedCount(mask);
  return n === 0 ? 0 : maskedSum(values, mask) / n;
}

/**
 * Variance of the values the mask keeps, unbiased (n − 1) by default like verl's masked_var. With fewer
 * than two kept values the unbiased variance is undefined and the biased one (0 or nothing) is returned.
 */
export function maskedVar(values: TokenRows, mask: TokenRows, unbiased = true): number {
  const n = maskedCount(mask);
  if (n === 0) return 0;
  const mean = maskedSum(values, mask) / n;
  let ss = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const m = mask[i];
    for (let t = 0; t < v.length; t++) if (m[t] !== 0) ss += (v[t] - mean) ** 2;
  }
  return unbiased && n > 1 ? ss / (n - 1) : ss / n;
}

export function maskedStd(values: TokenRows, mask: TokenRows, unbiased = true): number {
  return Math.sqrt(maskedVar(values, mask, unbiased));
}

export interface WhitenOptions {
  /** Subtract the masked mean (default true); false only rescales, adding the mean back like verl. */
  shiftMean?: boolean;
  /** Added to the variance under the square root (default 1e-8, verl's). */
  eps?: number;
}

/**
 * (x − mean) / sqrt(var + eps) with the masked mean and unbiased variance of the kept values; entries the
 * mask drops come out 0.
 */
export function maskedWhiten(
  values: TokenRows,
  mask: TokenRows,
  options: WhitenOptions = {},
): Float64Array[] {
  const { shiftMean = true, eps = 1e-8 } = options;
  const mean = maskedMean(values, mask);
  const scale = 1 / Math.sqrt(maskedVar(values, mask) + eps);
  return values.map((v, i) => {
    const m = mask[i];
    const out = new Float64Array(v.length);
    for (let t = 0; t < v.length; t++) {
      if (m[t] === 0) continue;
      const w = (v[t] - mean) * scale;
      out[t] = shiftMean ? w : w + mean;
    }
    return out;
  });
}

/** Mean of a list of numbers (0 for none). */
export function mean(xs: ArrayLike<number>): number {
  if (xs.length === 0) return 0;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s / xs.length;
}

/** Standard deviation of a list of numbers, unbiased by default like torch.std (0 for fewer than two). */
export function std(xs: ArrayLike<number>, unbiased = true): number {
  const n = xs.length;
  if (n < 2) return 0;
  const m = mean(xs);
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (xs[i] - m) ** 2;
  return Math.sqrt(ss / (unbiased ? n - 1 : n));
}

/**
 * Explained variance of the critic over the kept tokens, as verl reports it (critic/vf_explained_var):
 * 1 − Var[R − V] / (Var[R] + eps), unbiased variances. 1 is perfect, 0 no better than a constant.
 */
export function explainedVariance(
  values: TokenRows,
  returns: TokenRows,
  mask: TokenRows,
  eps = 1e-5,
): number {
  checkRows('explainedVariance', values, returns);
  const diff = returns.map((r, i) => {
    const v = values[i];
    const d = new Float64Array(r.length);
    for (let t = 0; t < r.length; t++) d[t] = r[t] - v[t];
    return d;
  });
  return 1 - maskedVar(diff, mask) / (maskedVar(returns, mask) + eps);
}

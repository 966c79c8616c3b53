import { expect } from 'vitest';

/** A policy's weights by parameter name, as numbers. */
export type NamedWeights = readonly (readonly [string, number[]])[];

/**
 * Expects `averaged` to be the bias-corrected moving average (`decay`) of `iterates`, the weights after
 * each step in order: Σ (1 − decay) · decay^(n−1−k) · w_k / (1 − decay^n).
 */
export function expectMovingAverage(
  averaged: NamedWeights,
  iterates: readonly NamedWeights[],
  decay: number,
) {
  const n = iterates.length;
  const norm = 1 - decay ** n;
  averaged.forEach(([name, values], j) => {
    expect(name).toBe(iterates[n - 1][j][0]);
    values.forEach((v, i) => {
      const expected =
        iterates.reduce((s, w, k) => s + (1 - decay) * decay ** (n - 1 - k) * w[j][1][i], 0) / norm;
      expect(v).toBeCloseTo(expected, 5);
    });
  });
}

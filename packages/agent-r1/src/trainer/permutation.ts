/** Seeded orders and draws of examples, reproducible from the run's generator. */
import { type Generator, rand, tidy } from '@agent-r1/tensor';

/** n uniform keys in [0, 1) from the generator. */
function uniformKeys(n: number, generator: Generator): ArrayLike<number> {
  return tidy(() => rand([n], { generator, dtype: 'float64', device: 'cpu' }).dataSync());
}

/** A permutation of 0..n-1 drawn from the run's generator (reproducible from the seed). */
export function randomPermutation(n: number, generator: Generator): number[] {
  const keys = uniformKeys(n, generator);
  return Array.from({ length: n }, (_, i) => i).sort((a, b) => keys[a] - keys[b] || a - b);
}

/**
 * A permutation of 0..weights.length-1 in which each index comes early with chance in proportion to its
 * weight: its prefixes are weighted draws without replacement (the keys of Efraimidis and Spirakis,
 * u^(1/w), largest first; compared as log(u)/w).
 */
export function weightedPermutation(weights: readonly number[], generator: Generator): number[] {
  const u = uniformKeys(weights.length, generator);
  const keys = weights.map((w, i) => Math.log(u[i]) / w);
  return keys.map((_, i) => i).sort((a, b) => keys[b] - keys[a] || a - b);
}

/**
 * `count` examples drawn without replacement (distinct while there are enough; past the last one it starts
 * over), uniformly or, with `weights`, each in proportion to its weight.
 */
export function sampleExamples<E>(
  examples: readonly E[],
  count: number,
  generator: Generator,
  weights?: readonly number[],
): E[] {
  const order = weights
    ? weightedPermutation(weights, generator)
    : randomPermutation(examples.length, generator);
  return Array.from({ length: count }, (_, i) => examples[order[i % order.length]]);
}

/**
 * How many times each example appears in one pass: its weight rounded down, plus one with the chance of
 * the fraction left (so the expected count is the weight). Whole weights draw nothing from `generator`.
 */
export function repeatCounts(weights: readonly number[], generator: Generator): number[] {
  return weights.map((w) => {
    const whole = Math.floor(w);
    return w === whole ? whole : whole + (generator.random() < w - whole ? 1 : 0);
  });
}

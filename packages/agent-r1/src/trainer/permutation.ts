import { type Generator, rand, tidy } from '@agent-r1/tensor';

/** A permutation of 0..n-1 drawn from the run's generator (reproducible from the seed). */
export function randomPermutation(n: number, generator: Generator): number[] {
  const keys = tidy(() => rand([n], { generator, dtype: 'float64' }).dataSync());
  return Array.from({ length: n }, (_, i) => i).sort((a, b) => keys[a] - keys[b] || a - b);
}

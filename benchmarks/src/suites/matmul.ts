/** Dense fp32 matrix multiply: square N×N, and the batched shape of a transformer's attention scores. */
import * as T from '@agent-r1/tensor';
import * as tfjs from '../anchors/tfjs.js';
import type { Benchmark } from '../harness.js';
import { type Input, ours, oursRunner, randn, shapeText } from '../inputs.js';

function matmulCase(name: string, a: Input, b: Input): Benchmark {
  const [M, K] = a.shape.slice(-2);
  const N = b.shape[b.shape.length - 1];
  const batch = a.shape.slice(0, -2).reduce((x, y) => x * y, 1);
  return {
    name,
    shape: `${shapeText(a.shape)} @ ${shapeText(b.shape)}`,
    work: { amount: 2 * batch * M * N * K, unit: 'GFLOP/s' },
    tolerance: 1e-3 * Math.sqrt(K),
    setup: {
      ours: () => {
        const [ta, tb] = [ours(a), ours(b)];
        return oursRunner([ta, tb], () => T.matmul(ta, tb));
      },
      tfjs: () => tfjs.matmul(a, b),
    },
  };
}

export function matmulSuite(): Benchmark[] {
  const square = [128, 256, 512].map((n) => matmulCase('matmul', randn([n, n], n), randn([n, n], n + 1)));
  const batched = matmulCase('batched_matmul', randn([8, 128, 64], 7), randn([8, 64, 128], 8));
  return [...square, batched];
}

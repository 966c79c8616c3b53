/** Layer normalisation over the last axis, with weight and bias. */
import * as T from '@agent-r1/tensor';
import * as tfjs from '../anchors/tfjs.js';
import type { Benchmark } from '../harness.js';
import { ours, oursRunner, randn, shapeText } from '../inputs.js';

export function normSuite(): Benchmark[] {
  const x = randn([1024, 512], 31, 2);
  const weight = randn([512], 32);
  const bias = randn([512], 33);
  const eps = 1e-5;
  return [
    {
      name: 'layer_norm',
      shape: shapeText(x.shape),
      // Read the input, write the output (weight and bias are negligible).
      work: { amount: 4 * 2 * x.data.length, unit: 'GB/s' },
      tolerance: 1e-4,
      setup: {
        ours: () => {
          const [tx, tw, tb] = [ours(x), ours(weight), ours(bias)];
          return oursRunner([tx, tw, tb], () => T.layerNorm(tx, tw, tb, eps));
        },
        tfjs: () => tfjs.layerNorm(x, weight, bias, eps),
      },
    },
  ];
}

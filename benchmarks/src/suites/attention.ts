/** Causal scaled-dot-product attention: ours is one fused kernel, tfjs is matmul + mask + softmax + matmul. */
import * as T from '@agent-r1/tensor';
import * as tfjs from '../anchors/tfjs.js';
import type { Benchmark } from '../harness.js';
import { ours, oursRunner, randn } from '../inputs.js';

export function attentionSuite(): Benchmark[] {
  const [B, H, S, D] = [1, 4, 128, 64];
  const q = randn([B, H, S, D], 41);
  const k = randn([B, H, S, D], 42);
  const v = randn([B, H, S, D], 43);
  return [
    {
      name: 'causal_attention',
      shape: `B${B} H${H} S${S} D${D}`,
      // Nominal flops of the two S×S matmuls, not discounting the masked half.
      work: { amount: 4 * B * H * S * S * D, unit: 'GFLOP/s' },
      tolerance: 1e-4,
      setup: {
        ours: () => {
          const [tq, tk, tv] = [ours(q), ours(k), ours(v)];
          return oursRunner([tq, tk, tv], () => T.scaledDotProductAttention(tq, tk, tv, { causal: true }));
        },
        tfjs: () => tfjs.causalAttention(q, k, v),
      },
    },
  ];
}

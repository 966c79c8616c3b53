/** One training step's forward and backward through a small MLP with cross-entropy loss. */
import * as T from '@agent-r1/tensor';
import * as tfjs from '../anchors/tfjs.js';
import type { Benchmark } from '../harness.js';
import { type Input, constant, ours, randint, randn } from '../inputs.js';

export function mlpSuite(): Benchmark[] {
  const batch = 256;
  const widths = [512, 512, 512, 10];
  const x = randn([batch, widths[0]], 51);
  const targets = randint(widths[3], [batch], 52);
  const layers: [Input, Input][] = widths
    .slice(1)
    .map((out, i) => [randn([widths[i], out], 53 + i, 1 / Math.sqrt(widths[i])), constant(0.01, [out])]);
  // Forward: 2·B·in·out per layer. Backward: weight gradients for every layer, input gradients for all
  // but the first (x needs none), each as costly as the forward matmul.
  const fwd = widths.slice(1).map((out, i) => 2 * batch * widths[i] * out);
  const flops = fwd.reduce((sum, f, i) => sum + f * (i === 0 ? 2 : 3), 0);
  return [
    {
      name: 'mlp_fwd_bwd',
      shape: `${batch}x${widths.join('-')}`,
      work: { amount: flops, unit: 'GFLOP/s' },
      tolerance: 1e-5,
      gradients: true,
      setup: {
        ours: () => {
          const tx = ours(x);
          const tt = ours(targets);
          const params = layers.map(([w, b]) => [
            ours(w, { requiresGrad: true }),
            ours(b, { requiresGrad: true }),
          ]);
          return {
            run() {
              let out: Float32Array | undefined;
              T.tidy(() => {
                let h = tx;
                params.forEach(([w, b], i) => {
                  h = T.add(T.matmul(h, w), b);
                  if (i < params.length - 1) h = T.relu(h);
                });
                const loss = T.crossEntropy(h, tt);
                loss.backward();
                loss.dataSync();
                params.forEach(([w, b], i) => {
                  const g = w.grad!.dataSync() as Float32Array;
                  if (i === 0) out = g;
                  b.grad!.dataSync();
                });
              });
              for (const p of params.flat()) p.zeroGrad();
              return out!;
            },
            dispose: () => T.dispose([tx, tt, ...params.flat()]),
          };
        },
        tfjs: () => tfjs.mlpStep({ x, targets, classes: widths[3], layers }),
      },
    },
  ];
}

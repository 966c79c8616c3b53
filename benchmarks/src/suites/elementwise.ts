/** Elementwise binary op with broadcasting: a bias-add shaped [R, C] + [C]. */
import * as T from '@agent-r1/tensor';
import * as tfjs from '../anchors/tfjs.js';
import type { Benchmark } from '../harness.js';
import { ours, oursRunner, randn, shapeText } from '../inputs.js';

export function elementwiseSuite(): Benchmark[] {
  const a = randn([1024, 1024], 11);
  const b = randn([1024], 12);
  const n = a.data.length;
  return [
    {
      name: 'add_broadcast',
      shape: `${shapeText(a.shape)} + ${shapeText(b.shape)}`,
      // Read a and b, write the output.
      work: { amount: 4 * (2 * n + b.data.length), unit: 'GB/s' },
      tolerance: 1e-6,
      setup: {
        ours: () => {
          const [ta, tb] = [ours(a), ours(b)];
          return oursRunner([ta, tb], () => T.add(ta, tb));
        },
        tfjs: () => tfjs.add(a, b),
      },
    },
  ];
}

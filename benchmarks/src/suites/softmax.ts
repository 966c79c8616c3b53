/** Row-wise softmax, and logprobs (log-softmax gathered at a target per row). */
import * as T from '@agent-r1/tensor';
import * as tfjs from '../anchors/tfjs.js';
import type { Benchmark } from '../harness.js';
import { ours, oursRunner, randint, randn, shapeText } from '../inputs.js';

export function softmaxSuite(): Benchmark[] {
  const x = randn([512, 1024], 21, 3);
  const logits = randn([256, 4096], 22, 3);
  const targets = randint(4096, [256], 23);
  return [
    {
      name: 'softmax',
      shape: shapeText(x.shape),
      // Read the input, write the output.
      work: { amount: 4 * 2 * x.data.length, unit: 'GB/s' },
      tolerance: 1e-6,
      setup: {
        ours: () => {
          const t = ours(x);
          return oursRunner([t], () => T.softmax(t));
        },
        tfjs: () => tfjs.softmax(x),
      },
    },
    {
      name: 'logprobs',
      shape: `${shapeText(logits.shape)} -> ${shapeText(targets.shape)}`,
      // Bytes of logits read (the output is one value per row).
      work: { amount: 4 * logits.data.length, unit: 'GB/s' },
      tolerance: 1e-4,
      setup: {
        ours: () => {
          const [tl, tt] = [ours(logits), ours(targets)];
          return oursRunner([tl, tt], () => T.logprobs(tl, tt));
        },
        tfjs: () => tfjs.logprobs(logits, targets),
      },
    },
  ];
}

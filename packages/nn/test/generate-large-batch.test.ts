/**
 * A batch of more rows than a call can take arguments (about 125k in Node 20): generation and the forward
 * pass must not spread per-row arrays into `Math.max` (issue #35: `train.promptsPerStep=100000` failed with
 * "Maximum call stack size exceeded" in generate.ts's padBatch, then in the forward pass and the copy head).
 */
import { tensor } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import { TransformerLM, extend } from '../src/index.js';

const ROWS = 150_000;
const tiny = { vocabSize: 5, dModel: 2, layers: 1, heads: 1, kvHeads: 1, maxLength: 4, seed: 3 };

describe('a batch of 150,000 rows', () => {
  it('extends a cache (padding, the forward pass and the copy head) without overflowing the stack', () => {
    const model = new TransformerLM({ ...tiny, copyHead: true });
    const cache = model.createCache(ROWS, 2);
    try {
      const rows = Array.from({ length: ROWS }, (_, i) => (i === 7 ? [1, 2] : [1 + (i % 4)]));
      const logits = extend(model, cache, rows);
      expect(logits).toHaveLength(ROWS);
      expect(logits[ROWS - 1]).toHaveLength(tiny.vocabSize);
      expect(cache.lengths[7]).toBe(2);
      expect(cache.lengths[ROWS - 1]).toBe(1);
    } finally {
      cache.dispose();
      model.dispose();
    }
  }, 120_000);

  it('scores chosen positions of every row (forward with positions)', () => {
    const model = new TransformerLM(tiny);
    const ids = tensor(new Int32Array(ROWS * 2).fill(1), { shape: [ROWS, 2] });
    const positions = Array.from({ length: ROWS }, (_, i) => (i % 2 ? [0, 1] : [1]));
    const out = model.forward(ids, { positions });
    try {
      expect(out.logits.shape).toEqual([ROWS, 2, tiny.vocabSize]);
    } finally {
      out.logits.dispose();
      ids.dispose();
      model.dispose();
    }
  }, 120_000);
});

import { TransformerLM } from '@agent-r1/nn';
import { type Tensor, disableWasmKernels, enableWasmKernels, wasmKernelsEnabled } from '@agent-r1/tensor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sequenceForward } from '../src/trainer/sequence.js';
import { randomBatch as randomBatchOf } from './support/random-batch.js';

const V = 19;
const randomBatch = (seed: number, rows: number) => randomBatchOf(seed, rows, V);

describe('sequenceForward', () => {
  it.each([false, true])(
    'with `needed`, gives the full pass’s log-probs and entropies at the needed tokens and 0 elsewhere (copy head: %s)',
    (copyHead) => {
      const model = new TransformerLM({
        vocabSize: V,
        dModel: 16,
        layers: 1,
        heads: 2,
        maxLength: 16,
        copyHead,
        dtype: 'float64',
        seed: 3,
      });
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 1, max: 4 }), (seed, n) => {
          const batch = randomBatch(seed, n);
          const rows = Array.from({ length: n }, (_, i) => i);
          const full = sequenceForward(model, batch, rows, { temperature: 0.7, entropy: true });
          const part = sequenceForward(model, batch, rows, {
            temperature: 0.7,
            entropy: true,
            needed: batch.actionMask,
          });
          const [lpFull, lpPart] = [full.logprobs.dataSync(), part.logprobs.dataSync()];
          const [hFull, hPart] = [full.entropy!.dataSync(), part.entropy!.dataSync()];
          for (const r of rows)
            for (let t = 0; t < batch.length; t++) {
              const i = r * batch.length + t;
              const wanted = batch.actionMask[r][t] !== 0 && t > 0;
              expect(lpPart[i]).toBeCloseTo(wanted ? lpFull[i] : 0, 10);
              expect(hPart[i]).toBeCloseTo(wanted ? hFull[i] : 0, 10);
            }
          for (const out of [full, part]) for (const x of Object.values(out)) x?.dispose();
        }),
        // Seed 16 with one row draws a one-token trajectory: nothing to predict.
        { numRuns: 20, examples: [[16, 1]] },
      );
    },
  );

  it.each(['typescript', 'wasm'])(
    'gives each row the same values whichever rows share its pass (%s kernels, float32, copy head)',
    (kernels) => {
      // The update and the reference pass group rows by length and run each group to its own longest row.
      // The TypeScript kernels give the same bits. The wasm kernels sum a row's tail outside the SIMD lanes,
      // so where the copy head normalises over the pass's width the last bits may move; and their
      // elementwise kernels take over from 4,096 elements, with their own exp: a vocabulary that large keeps
      // the output layers on one side of that line, alone or together, as the policy's does.
      const vocabSize = 4096;
      const was = wasmKernelsEnabled();
      if (kernels === 'wasm') enableWasmKernels();
      try {
        const model = new TransformerLM({
          vocabSize,
          dModel: 16,
          layers: 2,
          heads: 2,
          maxLength: 24,
          copyHead: true,
          seed: 5,
        });
        const batch = randomBatchOf(11, 6, vocabSize, 20);
        expect(new Set(batch.lengths).size).toBeGreaterThan(2);
        const rows = batch.lengths.map((_, i) => i);
        const options = { temperature: 0.7, entropy: true, needed: batch.actionMask };
        const together = sequenceForward(model, batch, rows, options);
        const L = batch.length;
        const rowOf = (t: Tensor, r: number) => Array.from(t.dataSync().subarray(r * L, (r + 1) * L));
        const same = (a: number[], b: number[]) => {
          if (kernels === 'typescript') expect(a).toEqual(b);
          else for (const [t, x] of a.entries()) expect(x).toBeCloseTo(b[t], 5);
        };
        for (const r of rows) {
          const alone = sequenceForward(model, batch, [r], options);
          expect(alone.logprobs.shape).toEqual([1, L]);
          same(rowOf(alone.logprobs, 0), rowOf(together.logprobs, r));
          same(rowOf(alone.entropy!, 0), rowOf(together.entropy!, r));
          // Run over the whole batch's length (as the warm start does): the padding changes nothing.
          const long = sequenceForward(model, batch, [r], { ...options, length: L });
          same(rowOf(long.logprobs, 0), rowOf(alone.logprobs, 0));
          for (const t of [alone.logprobs, alone.entropy!, long.logprobs, long.entropy!]) t.dispose();
        }
        together.logprobs.dispose();
        together.entropy!.dispose();
        model.dispose();
      } finally {
        if (!was) disableWasmKernels();
      }
    },
  );
});

import { TransformerLM } from '@agent-r1/nn';
import { Generator } from '@agent-r1/tensor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildBatch } from '../src/algorithms/batch.js';
import { startTrajectory } from '../src/mdp/trajectory.js';
import { sequenceForward } from '../src/trainer/sequence.js';

const V = 19;

/** Trajectories of random lengths, each token an action with chance 1/3 after a random prompt. */
function randomBatch(seed: number, rows: number) {
  const generator = new Generator(seed);
  const int = (n: number) => Math.floor(generator.random() * n);
  const trajectories = Array.from({ length: rows }, () => {
    const prompt = Array.from({ length: 1 + int(4) }, () => int(V));
    const t = startTrajectory(0, prompt);
    for (let i = 0, n = int(9); i < n; i++) {
      t.tokens.push(int(V));
      t.actionMask.push(generator.random() < 1 / 3 ? 1 : 0);
      t.logprobs.push(0);
    }
    return t;
  });
  return buildBatch(trajectories);
}

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
});

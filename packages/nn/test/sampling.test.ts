/** sampleToken: the token picked, and the log-probability a trainer recomputes for it. */
import { describe, expect, it } from 'vitest';
import { sampleToken } from '../src/index.js';

const logits = [0.5, 2, -1, 1.5];
/** log softmax(logits / temperature)[token], in float64. */
const logprobAt = (temperature: number, token: number) => {
  const z = logits.map((l) => l / temperature);
  const max = Math.max(...z);
  return z[token] - max - Math.log(z.reduce((s, v) => s + Math.exp(v - max), 0));
};

describe('sampleToken', () => {
  it('scores a token at the temperature it is drawn at, the greedy pick too', () => {
    for (const temperature of [0.5, 1, 2]) {
      const drawn = sampleToken(logits, 0.3, { temperature });
      expect(drawn.logprob).toBeCloseTo(logprobAt(temperature, drawn.token), 12);
      // A greedy row in a sampled batch (rollout.greedySamples) is scored as its samples are.
      const greedy = sampleToken(logits, 0.3, { temperature, greedy: true });
      expect(greedy.token).toBe(1);
      expect(greedy.logprob).toBeCloseTo(logprobAt(temperature, 1), 12);
    }
    // Temperature 0 is greedy decoding, scored under the logits themselves.
    expect(sampleToken(logits, 0.3, { temperature: 0 }).logprob).toBeCloseTo(logprobAt(1, 1), 12);
  });
});

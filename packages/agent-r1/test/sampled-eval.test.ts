/**
 * Sampled evaluation (`eval.temperature`, `eval.samples`): several episodes of each example, in order of
 * example, reproducible from the seed; twins compared sample by sample; refused where it would repeat
 * greedy episodes.
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../src/evaluation/evaluate.js';
import { type ScoredExample, SAME_ANSWER, addTwinAgreement } from '../src/evaluation/results.js';
import { createTask } from '../src/tasks/index.js';
import { resolveConfig } from '../src/trainer/config.js';
import { buildPolicy } from '../src/trainer/models.js';

describe('sampled evaluation', () => {
  it('runs each example `samples` times in a row, the same episodes for the same seed', async () => {
    const config = resolveConfig({ preset: 'reveal' });
    const task = await createTask(config);
    const policy = buildPolicy(config, task.vocabSize);
    const examples = task.validation.slice(0, 4);
    try {
      const run = (seed: number) =>
        evaluate(policy, task, examples, config.rollout, { sampling: { temperature: 1, samples: 3, seed } });
      const [a, again, other] = [await run(7), await run(7), await run(8)];
      expect(a.trajectories.map((t) => t.group)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
      expect(again.trajectories.map((t) => t.tokens)).toEqual(a.trajectories.map((t) => t.tokens));
      // An untrained policy samples almost uniformly: another seed gives other episodes, and so do an
      // example's own samples.
      expect(other.trajectories.map((t) => t.tokens)).not.toEqual(a.trajectories.map((t) => t.tokens));
      expect(a.trajectories[1].tokens).not.toEqual(a.trajectories[0].tokens);
      // Greedy episodes would repeat: several of them are refused.
      await expect(
        evaluate(policy, task, examples, config.rollout, {
          sampling: { temperature: 0, samples: 2, seed: 0 },
        }),
      ).rejects.toThrow(/2 samples per example need a temperature above 0/);
    } finally {
      policy.dispose();
    }
  }, 60_000);

  it("compares the k-th episode of an example with the k-th of its twin's", () => {
    const [a, b, lone] = [{ id: 'a' }, { id: 'b' }, { id: 'lone' }];
    const twinOf = (e: { id: string }) => (e === a ? b : e === b ? a : undefined);
    const examples = [a, a, b, b, lone, lone];
    const answers = ['Peru', 'Chad', 'peru', 'Peru', 'x', 'x'];
    const scored: ScoredExample[] = examples.map(() => ({ group: 'g', scores: {} }));
    addTwinAgreement({ twinOf }, examples, answers, scored);
    expect(scored.map((s) => s.scores[SAME_ANSWER])).toEqual([1, 0, 1, 0, undefined, undefined]);
  });

  it('is refused by the config where samples would be greedy, naming the key', () => {
    expect(() => resolveConfig({ preset: 'reveal', overrides: ['eval.samples=4'] })).toThrow(
      /eval\.samples.*\(4\) needs "eval\.temperature" above 0/,
    );
    const sampled = resolveConfig({
      preset: 'reveal',
      overrides: ['eval.samples=4', 'eval.temperature=0.7'],
    });
    expect(sampled.eval).toMatchObject({ samples: 4, temperature: 0.7 });
  });
});

import { Generator } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import { multihopQaTask } from '../src/tasks/multihop-qa/index.js';
import { presetConfig } from '../src/trainer/preset-config.js';

describe('taskOptions.punctuatedNames', () => {
  it("sets each stage's share of punctuated made-up names on its own", async () => {
    const { rollout, taskOptions } = presetConfig('multihop');
    const task = await multihopQaTask(
      { rollout, taskOptions: { ...taskOptions, punctuatedNames: { warmStart: 0, rl: 1 } } },
      {},
    );
    // The marks of the punctuated shapes (`Tralo K.B.`, `St. Mesin's`, `Brelo-de-Kano`, `Tralo and Mesin`);
    // a real name drawn from the pool may carry one too, so the shares are compared, not counted to zero.
    const punctuated = / [A-Z]\.[A-Z]\.|St\. |\p{L}-\p{L}| and /u;
    const questions = task.train.filter((q) => q.kind === 'capital').slice(0, 100);
    expect(questions.length).toBe(100);
    const share = (stage: 'warm-start' | 'rl') => {
      const generator = new Generator(7);
      const renamed = questions.map((q) =>
        task.renameEntities!(q, [q.question], generator, stage).apply(q.question),
      );
      return renamed.filter((text) => punctuated.test(text)).length / renamed.length;
    };
    expect(share('rl')).toBeGreaterThan(share('warm-start') + 0.3);
  }, 120_000);
});

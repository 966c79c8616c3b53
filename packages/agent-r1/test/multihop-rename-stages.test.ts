import { Generator } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import { multihopQaTask } from '../src/tasks/multihop-qa/index.js';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import { presetConfig } from '../src/trainer/preset-config.js';

type Stage = 'warm-start' | 'rl';

/**
 * For the multihop task with some renaming options set per stage: each stage's share of renamed questions
 * that `holds`, over the `count` training questions that `questions` chooses.
 */
async function stageShares(
  taskOptions: Record<string, unknown>,
  questions: (train: readonly QaExample[]) => QaExample[],
  count: number,
  holds: (renamed: string) => boolean,
) {
  const preset = presetConfig('multihop');
  const task = await multihopQaTask(
    { rollout: preset.rollout, taskOptions: { ...preset.taskOptions, ...taskOptions } },
    {},
  );
  const chosen = questions(task.train);
  expect(chosen.length).toBe(count);
  return (stage: Stage) => {
    const generator = new Generator(7);
    const renamed = chosen.map((q) =>
      task.renameEntities!(q, [q.question], generator, stage).apply(q.question),
    );
    return renamed.filter(holds).length / renamed.length;
  };
}

describe('renaming options set per stage', () => {
  it("taskOptions.punctuatedNames: each stage's share of punctuated made-up names", async () => {
    // The marks of the punctuated shapes (`Tralo K.B.`, `St. Mesin's`, `Brelo-de-Kano`, `Tralo and Mesin`);
    // a real name drawn from the pool may carry one too, so the shares are compared, not counted to zero.
    const punctuated = / [A-Z]\.[A-Z]\.|St\. |\p{L}-\p{L}| and /u;
    const share = await stageShares(
      { punctuatedNames: { warmStart: 0, rl: 1 } },
      (train) => train.filter((q) => q.kind === 'capital').slice(0, 100),
      100,
      (text) => punctuated.test(text),
    );
    expect(share('rl')).toBeGreaterThan(share('warm-start') + 0.3);
  }, 120_000);

  it("taskOptions.confusableNames: each stage's share of comparisons whose options begin alike", async () => {
    const options = /, (.+) or (.+)\?$/;
    const share = await stageShares(
      { renameEntities: { warmStart: 1, rl: 1 }, confusableNames: { warmStart: 0, rl: 1 } },
      (train) => train.filter((q) => q.kind === 'compare_area').slice(0, 100),
      100,
      (text) => {
        const [, x, y] = options.exec(text) ?? [];
        return x !== undefined && x.slice(0, 4) === y.slice(0, 4);
      },
    );
    // Every renamed comparison at 1; at 0 only the odd pair of drawn names shares its first four letters.
    expect(share('rl')).toBeGreaterThan(0.9);
    expect(share('warm-start')).toBeLessThan(0.1);
  }, 120_000);

  it("taskOptions.typeAdjectives: each stage's share of typed places whose type's adjective is made up", async () => {
    const typed = /the (Italian|French|Australian|Aegean) [a-z]+ /;
    const share = await stageShares(
      { renameEntities: { warmStart: 1, rl: 1 }, typeAdjectives: { warmStart: 1, rl: 0 } },
      (train) => train.filter((q) => typed.test(q.question)),
      54,
      (text) => !typed.test(text) && /the \p{Lu}\p{L}+(ian|an|ese|ish) [a-z]+ /u.test(text),
    );
    expect(share('warm-start')).toBe(1);
    expect(share('rl')).toBe(0);
  }, 120_000);
});

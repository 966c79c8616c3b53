import { Generator } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import { multihopQaTask } from '../src/tasks/multihop-qa/index.js';
import { namePieces } from '../src/tasks/multihop-qa/rename.js';
import { presetConfig } from '../src/trainer/preset-config.js';

describe('taskOptions.vocabularyNames', () => {
  it('shows in renamed training questions the pieces of test names that no training question holds', async () => {
    const { rollout, taskOptions } = presetConfig('multihop');
    const load = (vocabularyNames: number) =>
      multihopQaTask({ rollout, taskOptions: { ...taskOptions, vocabularyNames } }, {});
    const [plain, glued] = [await load(0), await load(1)];
    const tokens = (texts: readonly string[]) => new Set(texts.flatMap((t) => plain.codec.encode(t)));
    const seen = tokens(plain.train.map((q) => q.question));
    // The word pieces of test questions that no training question holds (` Vietnam`, `itzerland`).
    const pieces = namePieces(plain.codec, plain.vocabSize);
    const words = new Set([...pieces.starts.map((p) => ` ${p}`), ...pieces.continuations]);
    const unseen = [...tokens(plain.test!.map((q) => q.question))].filter(
      (id) => !seen.has(id) && words.has(plain.codec.decode([id])),
    );
    expect(unseen.length).toBeGreaterThan(20);

    // Every training question renamed five times over, as the warm start would (same generator both ways).
    const renamed = (task: typeof plain) => {
      const g = new Generator(0);
      return task.train.flatMap((q) =>
        Array.from({ length: 5 }, () => task.renameEntities!(q, [q.question], g).apply(q.question)),
      );
    };
    const covered = (texts: string[]) => {
      const read = tokens(texts);
      return unseen.filter((id) => read.has(id)).length / unseen.length;
    };
    const [before, after] = [covered(renamed(plain)), covered(renamed(glued))];
    expect(after).toBeGreaterThan(0.85);
    expect(after).toBeGreaterThan(before + 0.3);
  }, 120_000);
});

import { Generator } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import { multihopQaTask } from '../src/tasks/multihop-qa/index.js';
import { loadMultihopResources } from '../src/tasks/multihop-qa/task.js';
import { corpusWords, namePieces } from '../src/tasks/multihop-qa/rename.js';
import { presetConfig } from '../src/trainer/preset-config.js';

describe('taskOptions.vocabularyNames', () => {
  it('shows in renamed training questions the word parts of test names that no training question holds, and no whole word', async () => {
    const { rollout, taskOptions } = presetConfig('multihop');
    const load = (vocabularyNames: number) =>
      multihopQaTask({ rollout, taskOptions: { ...taskOptions, vocabularyNames } }, {});
    const [plain, glued] = [await load(0), await load(1)];
    const tokens = (texts: readonly string[]) => new Set(texts.flatMap((t) => plain.codec.encode(t)));
    const seen = tokens(plain.train.map((q) => q.question));
    // The word pieces of test questions that no training question holds: parts of words (`itzerland`,
    // ` Camb`) and whole words of the corpus (` Vietnam`).
    const pieces = namePieces(plain.codec, plain.vocabSize);
    const words = new Set([...pieces.starts.map((p) => ` ${p}`), ...pieces.continuations]);
    const unseen = [...tokens(plain.test!.map((q) => q.question))].filter(
      (id) => !seen.has(id) && words.has(plain.codec.decode([id])),
    );
    const corpus = corpusWords(loadMultihopResources().dataset.corpus);
    const isWhole = (id: number) => {
      const piece = plain.codec.decode([id]);
      return piece.startsWith(' ') && corpus.has(piece.trim().toLowerCase());
    };
    const [whole, parts] = [unseen.filter(isWhole), unseen.filter((id) => !isWhole(id))];
    expect(parts.length).toBeGreaterThan(20);
    expect(whole.length).toBeGreaterThan(20);

    // Every training question renamed five times over, as the warm start would (same generator both ways).
    const renamed = (task: typeof plain) => {
      const g = new Generator(0);
      return task.train.flatMap((q) =>
        Array.from({ length: 5 }, () =>
          task.renameEntities!(q, [q.question], g, 'warm-start').apply(q.question),
        ),
      );
    };
    const covered = (texts: string[], ids: number[]) => {
      const read = tokens(texts);
      return ids.filter((id) => read.has(id)).length / ids.length;
    };
    const [before, after] = [renamed(plain), renamed(glued)];
    expect(covered(after, parts)).toBeGreaterThan(0.9);
    expect(covered(after, parts)).toBeGreaterThan(covered(before, parts) + 0.3);
    // A whole word read only as the start of made-up words (`Iranada`) teaches that it goes on.
    expect(covered(after, whole)).toBeLessThanOrEqual(covered(before, whole));
  }, 120_000);
});

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMultihopResources, multihopQaTask } from '../src/tasks/multihop-qa/index.js';
import { presetConfig } from '../src/trainer/preset-config.js';
import { recordDemonstration } from '../src/trainer/demonstrations.js';

/** The training split's area comparisons, and the query and page of each option's geography. */
function geographySearches(titleBoost?: number) {
  const r = loadMultihopResources({ titleBoost });
  const pages = r.dataset.questions.train
    .filter((q) => q.kind === 'compare_area')
    .flatMap((q) => q.supportingDocs.map((id) => r.docs.get(id)!));
  // `Peru (geography)` is searched as `Peru geography`, as the scripted searcher writes it.
  return { r, searches: pages.map((page) => ({ page, query: page.title.replace(/ \((.*)\)$/, ' $1') })) };
}

describe('taskOptions.searchTitleBoost', () => {
  it("ranks an area comparison's geography page higher at 2: first in most searches, where by default half", () => {
    const ranks = (titleBoost?: number) => {
      const { r, searches } = geographySearches(titleBoost);
      const at = searches.map(({ page, query }) =>
        r.index.search(query, 3).findIndex((hit) => hit.id === page.id),
      );
      return {
        first: at.filter((rank) => rank === 0).length,
        topTwo: at.filter((rank) => rank === 0 || rank === 1).length,
      };
    };
    const { searches } = geographySearches();
    expect(searches.length).toBeGreaterThan(300);
    const [plain, boosted] = [ranks(), ranks(2)];
    expect(plain.first).toBeLessThan(searches.length * 0.6);
    expect(boosted.first).toBeGreaterThan(searches.length * 0.85);
    // A page in the top two is shown whole; the third is what the observation's cut shortens.
    expect(boosted.topTwo).toBeGreaterThanOrEqual(searches.length - 2);
    expect(plain.topTwo).toBeLessThan(searches.length * 0.9);
  });

  const tmp = mkdtempSync(join(tmpdir(), 'multihop-title-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('lets the scripted searcher read both areas and call the compare tool in every area comparison', async () => {
    const { rollout } = presetConfig('multihop');
    const calls = async (searchTitleBoost: number) => {
      const task = await multihopQaTask(
        { rollout, taskOptions: { compareTool: true, searchTitleBoost } },
        { cacheDir: tmp },
      );
      const comparisons = task.train.filter((q) => q.kind === 'compare_area');
      let called = 0;
      for (const [i, q] of comparisons.entries()) {
        const demo = await recordDemonstration(task.makeEnv(), q, task.scripted!(q, i), task.codec, rollout);
        if (demo.turns.some((turn) => turn.action.startsWith('<compare>'))) called++;
      }
      return { called, of: comparisons.length };
    };
    const boosted = await calls(2);
    expect(boosted.called).toBe(boosted.of);
    const plain = await calls(1);
    expect(plain.called).toBeLessThan(plain.of);
    // The tokenizer read the boosted index's episodes: it is cached under a name of its own.
    expect(
      readdirSync(tmp)
        .filter((f) => f.startsWith('tokenizer-'))
        .sort(),
    ).toEqual([expect.stringMatching(/-compare-title2\.json$/), expect.stringMatching(/-compare\.json$/)]);
  }, 180_000);
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareTool } from '../src/tasks/multihop-qa/compare-tool.js';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import { loadMultihopResources, multihopQaTask } from '../src/tasks/multihop-qa/index.js';
import { compareFault } from '../src/tasks/multihop-qa/recovery.js';
import type { AgentTask } from '../src/tasks/task.js';
import { encodeDemonstration, recordDemonstration } from '../src/trainer/demonstrations.js';

const train = () => loadMultihopResources().dataset.questions.train;
const comparisons = () => train().filter((q) => q.kind.startsWith('compare'));
const LIMITS = { maxTurns: 5, maxTokensPerTurn: 32, maxLength: 384, maxObservationTokens: 96 };

describe('compareFault', () => {
  it('faults only comparisons, about the share asked, the same ones on every call', () => {
    expect(train().filter((q) => !q.kind.startsWith('compare') && compareFault(q, 1))).toEqual([]);
    expect(comparisons().filter((q) => compareFault(q, 0))).toEqual([]);
    expect(comparisons().every((q) => compareFault(q, 1))).toBe(true);
    const half = comparisons().filter((q) => compareFault(q, 0.5));
    expect(half.length / comparisons().length).toBeGreaterThan(0.35);
    expect(half.length / comparisons().length).toBeLessThan(0.65);
    expect(comparisons().filter((q) => compareFault(q, 0.5))).toEqual(half);
  });

  it('writes calls the compare tool refuses, of both shapes and at both items', async () => {
    const faulty = new Set<string>();
    for (const [values, example] of [
      ['Peru 1,285,216 ; Brazil 8,515,767', 'compare_area'],
      ['Mongolia is landlocked ; Peru is not landlocked', 'compare_landlocked'],
    ] as const)
      for (const q of comparisons().filter((c) => c.kind === example)) {
        const wrong = compareFault(q, 1)!(values);
        expect(wrong).not.toBe(values);
        const result = await compareTool().execute({ values: wrong });
        expect(result.success, wrong).toBe(false);
        faulty.add(wrong);
      }
    // A figure or property left out at either item, and either item written for both.
    for (const wrong of [
      'Peru ; Brazil 8,515,767',
      'Peru 1,285,216 ; Brazil',
      'Peru 1,285,216 ; Peru 1,285,216',
      'Brazil 8,515,767 ; Brazil 8,515,767',
      'Mongolia ; Peru is not landlocked',
    ])
      expect(faulty).toContain(wrong);
  });
});

describe('multihop-qa with taskOptions.compareRecovery', () => {
  let task: AgentTask<QaExample>;
  const tmp = mkdtempSync(join(tmpdir(), 'multihop-recovery-'));
  beforeAll(async () => {
    task = await multihopQaTask(
      {
        rollout: LIMITS,
        taskOptions: { compareTool: true, compareStatements: true, plan: true, compareRecovery: 1 },
      },
      { cacheDir: tmp },
    );
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('a comparison demonstration is refused once, calls again as the plan says, answers right, and its refused turn is shown only', async () => {
    const some = task.train.filter((q) => q.kind.startsWith('compare')).slice(0, 24);
    expect(new Set(some.map((q) => q.kind)).size).toBe(2);
    let recovered = 0;
    for (const [i, q] of some.entries()) {
      const demo = await recordDemonstration(task.makeEnv(), q, task.scripted!(q, i), task.codec, LIMITS);
      const calls = demo.toolCalls.filter((c) => c.name === 'compare');
      // Where a page was cut before its figure or statement, the searcher calls nothing (as without faults).
      if (calls.length === 0) continue;
      recovered++;
      expect(
        calls.map((c) => c.success),
        q.id,
      ).toEqual([false, true]);
      expect(demo.info.em, q.id).toBe(1);
      for (const c of calls) expect(demo.turns[c.turn].action).toMatch(/^<think> compare<\/think><compare>/);
      const traj = encodeDemonstration(demo, task.codec, LIMITS);
      expect(traj.tokens.length).toBeLessThanOrEqual(LIMITS.maxLength);
      expect(traj.turns.map((t, turn) => (t.imitated === false ? turn : -1)).filter((t) => t >= 0)).toEqual([
        calls[0].turn,
      ]);
    }
    expect(recovered).toBeGreaterThanOrEqual(20);
  });

  it('leaves the scripted searcher of the baselines as it was, and needs the compare tool', async () => {
    const q = task.train.find((c) => c.kind === 'compare_area')!;
    const baseline = await multihopQaTask(
      { rollout: LIMITS, taskOptions: { compareTool: true, plan: true } },
      { cacheDir: tmp },
    );
    const demo = await recordDemonstration(
      baseline.makeEnv(),
      q,
      baseline.scripted!(q, 0),
      baseline.codec,
      LIMITS,
    );
    expect(demo.toolCalls.filter((c) => c.name === 'compare').map((c) => c.success)).toEqual([true]);
    await expect(
      multihopQaTask({ rollout: LIMITS, taskOptions: { compareRecovery: 0.5 } }, { cacheDir: tmp }),
    ).rejects.toThrow(/compareRecovery needs taskOptions.compareTool/);
  });
});

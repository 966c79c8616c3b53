/**
 * The comparison questions' position probe: each test comparison again with its two options swapped,
 * reported in a group of its own and left out of 'all'.
 */
import { describe, expect, it } from 'vitest';
import { tableExamples } from '../src/evaluation/report.js';
import { formatResultsTable, tableLayout } from '../src/evaluation/results.js';
import { comparisonOptions } from '../src/tasks/multihop-qa/scripted.js';
import { COMPARISONS_GROUP, SWAPPED_GROUP, isSwappedComparison } from '../src/tasks/multihop-qa/swapped.js';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import { createTask } from '../src/tasks/index.js';
import type { AgentTask, ResultRow } from '../src/tasks/task.js';
import { resolveConfig } from '../src/trainer/config.js';

const row = (rows: ResultRow[], method: string, group: number | string) =>
  rows.find((r) => r.method === method && r.group === group)!;

describe('swapped comparisons', () => {
  it('follow each test comparison with its options, documents and evidence swapped, and stay out of "all"', async () => {
    const task = (await createTask(resolveConfig({ preset: 'multihop' }))) as AgentTask<QaExample>;
    const test = task.test!;
    const swapped = test.filter(isSwappedComparison);
    const originals = test.filter((q) => !isSwappedComparison(q));
    expect(swapped.length).toBeGreaterThan(40);
    for (const copy of swapped) {
      const original = test[test.indexOf(copy) - 1];
      expect(copy.id).toBe(`${original.id}~swapped`);
      const [x, y] = comparisonOptions(original.question)!;
      expect(comparisonOptions(copy.question)).toEqual([y, x]);
      expect(copy.question.replace(`${y} or ${x}`, '')).toBe(original.question.replace(`${x} or ${y}`, ''));
      expect(copy.answers).toEqual(original.answers);
      expect(copy.supportingDocs).toEqual([...original.supportingDocs].reverse());
      expect(copy.evidence).toEqual([...(original.evidence ?? [])].reverse());
    }

    // A cut of the table to its first n examples counts originals only; each keeps its swapped copy.
    const cut = tableExamples(
      task,
      resolveConfig({ preset: 'multihop', overrides: ['eval.testExamples=40'] }),
    );
    expect(cut.filter((q) => !isSwappedComparison(q))).toEqual(originals.slice(0, 40));
    expect(cut.filter(isSwappedComparison)).toEqual(
      swapped.filter((q) => cut.some((o) => `${o.id}~swapped` === q.id)),
    );
    expect(cut.filter(isSwappedComparison).length).toBeGreaterThan(0);

    const rows = await task.baselines!(test);
    for (const method of ['no retrieval', 'naive RAG', 'scripted searcher']) {
      expect(row(rows, method, 'all').n).toBe(originals.length);
      expect(row(rows, method, COMPARISONS_GROUP).n).toBe(swapped.length);
      expect(row(rows, method, SWAPPED_GROUP).n).toBe(swapped.length);
    }
    // Reading the facts is position-invariant: the gold-chain searcher gets every comparison both ways.
    expect(row(rows, 'scripted searcher', COMPARISONS_GROUP).scores.em).toBe(1);
    expect(row(rows, 'scripted searcher', SWAPPED_GROUP).scores.em).toBe(1);
    // Answering by position is not: no retrieval names the first option, right on exactly one of each pair.
    const first = row(rows, 'no retrieval', COMPARISONS_GROUP).scores.em;
    const second = row(rows, 'no retrieval', SWAPPED_GROUP).scores.em;
    expect(first + second).toBeCloseTo(1, 12);
    // How often a pair gets the same answer, on the swapped copies only: 1 read, 0 by position.
    expect(row(rows, 'scripted searcher', SWAPPED_GROUP).scores.sameAnswer).toBe(1);
    expect(row(rows, 'no retrieval', SWAPPED_GROUP).scores.sameAnswer).toBe(0);
    expect(row(rows, 'no retrieval', COMPARISONS_GROUP).scores.sameAnswer).toBeUndefined();
    expect(row(rows, 'no retrieval', 'all').scores.sameAnswer).toBeUndefined();
    expect(formatResultsTable(rows, tableLayout(task))).toContain(
      `| scripted searcher | ${SWAPPED_GROUP} | ${swapped.length} | 1.000 | 1.000 | 1.000 | 1.000 |`,
    );
  });

  it('taskOptions.swappedComparisons trains on each training comparison both ways', async () => {
    const plain = (await createTask(resolveConfig({ preset: 'multihop' }))) as AgentTask<QaExample>;
    const both = (await createTask(
      resolveConfig({ preset: 'multihop', overrides: ['taskOptions.swappedComparisons=true'] }),
    )) as AgentTask<QaExample>;
    expect(plain.train.some(isSwappedComparison)).toBe(false);
    const copies = both.train.filter(isSwappedComparison);
    expect(copies.length).toBeGreaterThan(100);
    expect(both.train.filter((q) => !isSwappedComparison(q))).toEqual(plain.train);
    for (const copy of copies)
      expect(both.train[both.train.indexOf(copy) - 1].id).toBe(copy.id.replace('~swapped', ''));
  });
});

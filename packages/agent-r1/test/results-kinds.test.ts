import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Trajectory, startTrajectory } from '../src/mdp/trajectory.js';
import { formatKindTable, kindRows } from '../src/evaluation/kinds.js';
import { tableLayout, writeResults } from '../src/evaluation/results.js';

interface Q {
  kind?: string;
}

/** A finished greedy episode of example `group`: its answer's scores and the tools it called, in order. */
function episode(group: number, em: number, tools: string[]): Trajectory {
  const t = startTrajectory(group, [1, 2, 3]);
  t.info = { answer: 'x', em, f1: em };
  t.toolCalls = tools.map((name, turn) => ({ turn, name, args: {}, content: '', success: true }));
  return t;
}

const task = { kindOf: (q: Q) => q.kind, answerMetrics: ['em', 'f1'] };
const examples: Q[] = [{ kind: 'area' }, { kind: 'capital' }, { kind: 'area' }, {}, { kind: 'area' }];
const trajectories = [
  episode(0, 1, ['search', 'search', 'compare']),
  episode(1, 1, ['search']),
  episode(2, 0, ['search', 'search']),
  episode(3, 1, ['search']),
  episode(4, 1, ['search', 'search', 'compare']),
];

describe('results by kind of example', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kinds-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("gives each kind's mean scores and each tool's calls per episode; an example without a kind is left out", () => {
    const rows = kindRows('GRPO', task, examples, trajectories);
    expect(rows).toEqual([
      {
        method: 'GRPO',
        kind: 'area',
        n: 3,
        scores: { em: 2 / 3, f1: 2 / 3 },
        toolCalls: { compare: 2 / 3, search: 2 },
      },
      {
        method: 'GRPO',
        kind: 'capital',
        n: 1,
        scores: { em: 1, f1: 1 },
        toolCalls: { compare: 0, search: 1 },
      },
    ]);
    // The same trajectories in another order: the same rows, the kinds in order of first appearance.
    const reversed = kindRows('GRPO', task, examples, [...trajectories].reverse());
    expect(reversed.map((r) => r.kind)).toEqual(['area', 'capital']);
    expect(reversed[0].toolCalls).toEqual(rows[0].toolCalls);
  });

  it('has no rows for a task without kinds', () => {
    expect(kindRows('GRPO', { answerMetrics: ['em'] }, examples, trajectories)).toEqual([]);
  });

  it('writes the rows as a table in results.md and as results-kinds.json; a tool one method never called is 0', () => {
    const layout = tableLayout({ answerMetrics: ['em', 'f1'] });
    const kinds = [
      ...kindRows('GRPO', task, examples, trajectories),
      ...kindRows('warm start', task, examples.slice(1, 2), [episode(0, 0, ['search', 'search'])]),
    ];
    const table = formatKindTable(kinds, layout);
    expect(table.split('\n')).toEqual([
      '| method | kind | n | EM | F1 | compare calls | search calls |',
      '|---|---|---:|---:|---:|---:|---:|',
      '| GRPO | area | 3 | 0.667 | 0.667 | 0.67 | 2.00 |',
      '| GRPO | capital | 1 | 1.000 | 1.000 | 0.00 | 1.00 |',
      '| warm start | capital | 1 | 0.000 | 0.000 | 0.00 | 2.00 |',
    ]);
    const rows = [{ method: 'GRPO', group: 'all', n: 5, scores: { em: 0.8, f1: 0.8 } }];
    const written = writeResults(dir, rows, 'toy', layout, kinds);
    expect(written.kinds).toBe(join(dir, 'results-kinds.json'));
    expect(readFileSync(join(dir, 'results.md'), 'utf8')).toContain(table);
    expect(JSON.parse(readFileSync(join(dir, 'results-kinds.json'), 'utf8'))).toEqual(kinds);
    // Without rows by kind: no such table, and no file is named.
    const plain = writeResults(join(dir, 'plain'), rows, 'toy', layout);
    expect(plain.kinds).toBeUndefined();
    expect(readFileSync(plain.md, 'utf8')).not.toContain('by kind');
  });
});

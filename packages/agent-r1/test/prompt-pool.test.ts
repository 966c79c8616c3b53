import { describe, expect, it } from 'vitest';
import type { AgentTask } from '../src/tasks/task.js';
import { rlPromptPool } from '../src/trainer/prompt-pool.js';

interface Q {
  id: number;
  hops: number;
}
const train: Q[] = Array.from({ length: 12 }, (_, id) => ({ id, hops: 1 + (id % 3) }));
const task = { name: 'toy', train, groupOf: (q: Q) => q.hops } as unknown as AgentTask<Q>;

describe('rlPromptPool (train.groups)', () => {
  it('keeps every training example by default, and only the named groups otherwise', () => {
    expect(rlPromptPool(task, '')).toBe(train);
    expect(rlPromptPool(task, '2,3').map((q) => q.id)).toEqual([1, 2, 4, 5, 7, 8, 10, 11]);
    expect(rlPromptPool(task, ' 3 ').every((q) => q.hops === 3)).toBe(true);
  });

  it('names the culprit: a group no example is in, or a task without groups', () => {
    expect(() => rlPromptPool(task, '4')).toThrow(
      "train.groups: no training example is in group 4; task 'toy' has groups 1, 2, 3",
    );
    const flat = { name: 'flat', train } as unknown as AgentTask<Q>;
    expect(() => rlPromptPool(flat, '2')).toThrow("train.groups: task 'flat' has no groups");
  });
});

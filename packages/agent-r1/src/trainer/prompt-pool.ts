/**
 * The training examples the RL stage draws its prompts from: all of them, or (`train.groups`) only those in
 * some of the results table's groups (multi-hop QA: hop counts), e.g. to spend the RL budget on the
 * questions a warm start answers worst.
 */
import type { AgentTask } from '../tasks/task.js';

/** `groups`: comma-separated group names ('2,3'); empty for every training example. */
export function rlPromptPool<E>(task: AgentTask<E>, groups: string): readonly E[] {
  const wanted = new Set(
    groups
      .split(',')
      .map((g) => g.trim())
      .filter((g) => g !== ''),
  );
  if (wanted.size === 0) return task.train;
  const groupOf = task.groupOf;
  if (!groupOf) throw new Error(`train.groups: task '${task.name}' has no groups to pick examples by`);
  const pool = task.train.filter((e) => wanted.has(String(groupOf(e))));
  if (pool.length === 0) {
    const known = [...new Set(task.train.map((e) => String(groupOf(e))))].sort();
    throw new Error(
      `train.groups: no training example is in group ${[...wanted].join(' or ')}; task '${task.name}' has groups ${known.join(', ')}`,
    );
  }
  return pool;
}

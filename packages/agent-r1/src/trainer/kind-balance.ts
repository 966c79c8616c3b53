/**
 * Balancing an example set's kinds (`sft.balanceKinds`, `train.balanceKinds`; tasks with `kindOf` only):
 * an example of a kind with n examples weighs n^-strength, so a kind's share of the draws goes as
 * n^(1 - strength): 0 keeps the data's mix, 1 draws every kind equally often. Without it the rare kinds
 * (multi-hop QA: 3-hop chains are 7% of the training questions, some 2-hop kinds under 2%) get few updates.
 */
import type { Generator } from '@agent-r1/tensor';
import type { AgentTask } from '../tasks/task.js';

/**
 * Each example's weight, with mean 1 (so a pass over `examples` keeps its size); all 1 when `strength` is 0.
 * `setting` names the config key in the error for a task without kinds.
 */
export function kindWeights<E>(
  task: Pick<AgentTask<E>, 'name' | 'kindOf'>,
  examples: readonly E[],
  strength: number,
  setting: string,
): number[] {
  if (strength === 0) return examples.map(() => 1);
  const kindOf = task.kindOf;
  if (!kindOf) throw new Error(`${setting}: task '${task.name}' has no kinds of example to balance`);
  const kinds = examples.map((e) => kindOf(e));
  const counts = new Map<string, number>();
  for (const k of kinds) counts.set(k, (counts.get(k) ?? 0) + 1);
  const raw = kinds.map((k) => counts.get(k)! ** -strength);
  const mean = raw.reduce((s, w) => s + w, 0) / raw.length;
  return raw.map((w) => w / mean);
}

/**
 * How many times each example appears in one pass: its weight rounded down, plus one with the chance of
 * the fraction left (so the expected count is the weight). Whole weights draw nothing from `generator`.
 */
export function repeatCounts(weights: readonly number[], generator: Generator): number[] {
  return weights.map((w) => {
    const whole = Math.floor(w);
    return w === whole ? whole : whole + (generator.random() < w - whole ? 1 : 0);
  });
}

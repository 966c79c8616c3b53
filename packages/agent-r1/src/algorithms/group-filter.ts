/**
 * Dynamic sampling (DAPO, Yu et al. 2025): a group whose trajectories all earned the same reward has zero
 * advantage under GRPO and RLOO, so it adds nothing to the policy gradient and only dilutes the token mean.
 * The trainer keeps the groups that carry a signal and rolls out more prompts to refill the batch.
 */
import { type Trajectory, totalReward } from '../mdp/trajectory.js';

/** The groups (by `Trajectory.group`, in order of first appearance) whose total rewards are not all equal. */
export function informativeGroups(trajectories: readonly Trajectory[]): Trajectory[][] {
  const groups = new Map<number, Trajectory[]>();
  for (const t of trajectories) {
    const group = groups.get(t.group);
    if (group) group.push(t);
    else groups.set(t.group, [t]);
  }
  return [...groups.values()].filter((group) => {
    const first = totalReward(group[0]);
    return group.some((t) => totalReward(t) !== first);
  });
}

/** Groups from several rollout rounds as one batch: group i's trajectories get `group` i. */
export function renumberGroups(groups: readonly (readonly Trajectory[])[]): Trajectory[] {
  return groups.flatMap((group, i) => group.map((t) => ({ ...t, group: i })));
}

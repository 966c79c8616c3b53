import { describe, expect, it } from 'vitest';
import { informativeGroups, renumberGroups } from '../src/algorithms/group-filter.js';
import { type Trajectory, startTrajectory } from '../src/mdp/trajectory.js';

/** A trajectory of `group` whose rewards are `values` (an outcome reward, plus process rewards). */
function scored(group: number, ...values: number[]): Trajectory {
  const t = startTrajectory(group, [1, 2]);
  t.rewards = values.map((value, i) => ({ value, position: 1, kind: i === 0 ? 'outcome' : 'process' }));
  return t;
}

describe('dynamic sampling: informative groups', () => {
  it('keeps the groups whose total rewards differ, in order of first appearance', () => {
    const trajectories = [
      scored(2, 1),
      scored(0, 0),
      scored(2, 0),
      scored(0, 0),
      scored(1, 1),
      scored(1, 1),
      scored(3, 0.5, 0.5),
      scored(3, 1),
      scored(4, 0.5, 0.25),
      scored(4, 1),
    ];
    const kept = informativeGroups(trajectories);
    // Group 2 differs (1 vs 0), 0 and 1 are constant, 3 is constant in total (1 = 0.5 + 0.5), 4 differs.
    expect(kept.map((g) => g.map((t) => t.group))).toEqual([
      [2, 2],
      [4, 4],
    ]);
  });

  it('renumbers groups from several rounds as one batch without touching the originals', () => {
    const round1 = [scored(0, 1), scored(0, 0)];
    const round2 = [scored(0, 0), scored(0, 1)];
    const batch = renumberGroups([...informativeGroups(round1), ...informativeGroups(round2)]);
    expect(batch.map((t) => t.group)).toEqual([0, 0, 1, 1]);
    expect(batch[2].rewards).toBe(round2[0].rewards);
    expect(round2.map((t) => t.group)).toEqual([0, 0]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  applyKlPenalty,
  buildBatch,
  computeGaeAdvantages,
  computeGrpoAdvantages,
  computeReinforcePlusPlusAdvantages,
  computeReinforcePlusPlusBaselineAdvantages,
  computeRlooAdvantages,
  klEstimate,
  sequenceScores,
} from '../src/index.js';
import type { Trajectory } from '../src/mdp/trajectory.js';

/** Layout of every row below: prompt [0, 2), action 1 [2, 4), observation [4, 6), action 2 [6, 8). */
const M = [0, 0, 1, 1, 0, 0, 1, 1];
const OBS = [0, 1, 4, 5];

/** A row of rewards: `process` on the last token of action 1, `outcome` on the last token of action 2. */
const rewardRow = (outcome: number, process = 0) => [0, 0, 0, process, 0, 0, 0, outcome];
/** A row holding `a` on every action token. */
const onActions = (a: number) => M.map((m) => m * a);

function expectClose(actual: ArrayLike<number>, expected: number[], digits = 12): void {
  expect(actual.length).toBe(expected.length);
  for (const [i, e] of expected.entries()) expect(actual[i]).toBeCloseTo(e, digits);
}

/** Each row holds its per-row advantage on every action token and 0 elsewhere. */
function expectBroadcast(advantages: Float64Array[], perRow: number[]): void {
  expect(advantages.length).toBe(perRow.length);
  for (const [i, a] of perRow.entries()) expectClose(advantages[i], onActions(a));
}

function trajectory(group: number, outcome: number): Trajectory {
  return {
    group,
    promptLength: 2,
    tokens: [10, 11, 20, 21, 30, 31, 40, 41],
    actionMask: M,
    logprobs: [0, 0, -0.5, -0.6, 0, 0, -0.7, -0.8],
    turns: [
      { actionStart: 2, actionEnd: 4, observationStart: 4, observationEnd: 6 },
      { actionStart: 6, actionEnd: 8, observationStart: 8, observationEnd: 8 },
    ],
    toolCalls: [],
    rewards: [{ position: 7, value: outcome, kind: 'outcome' }],
    finishReason: 'done',
    info: {},
  };
}

describe('every estimator on a multi-turn trajectory', () => {
  // Two samples of one prompt, rewarded only at the end of action 2.
  const batch = buildBatch([trajectory(0, 1), trajectory(0, 0)]);
  const { rewards, actionMask, groups } = batch;
  const values = [M.map(() => 0.25), M.map(() => 0.25)];
  const estimators = {
    gae: () => computeGaeAdvantages({ rewards, actionMask, values, gamma: 1, lambda: 1, whiten: false }),
    grpo: () => computeGrpoAdvantages({ rewards, actionMask, groups }),
    'reinforce++': () => computeReinforcePlusPlusAdvantages({ rewards, actionMask, gamma: 1 }),
    'reinforce++-baseline': () => computeReinforcePlusPlusBaselineAdvantages({ rewards, actionMask, groups }),
    rloo: () => computeRlooAdvantages({ rewards, actionMask, groups }),
  };

  it.each(Object.entries(estimators))(
    '%s: observation tokens get 0 and the final reward reaches the first action',
    (_name, run) => {
      const { advantages } = run();
      for (const row of advantages) for (const t of OBS) expect(row[t]).toBe(0);
      // With γ = λ = 1 the credit of the final reward reaches action 1 undiminished, across the observation.
      expect(advantages[0][2]).toBeGreaterThan(0);
      expect(advantages[0][2]).toBeCloseTo(advantages[0][7], 12);
      expect(advantages[1][2]).toBeCloseTo(advantages[1][7], 12);
      expect(advantages[0][2]).toBeGreaterThan(advantages[1][2]);
    },
  );
});

describe('GAE', () => {
  it('matches a hand computation with γ = 0.9, λ = 0.8, reading values on action tokens only', () => {
    // Observation values (9) must be skipped: the next state of token 3 is token 6.
    const values = [[9, 9, 0.1, 0.2, 9, 9, 0.3, 0.4]];
    const { advantages, returns } = computeGaeAdvantages({
      rewards: [rewardRow(1, 0.5)],
      actionMask: [M],
      values,
      gamma: 0.9,
      lambda: 0.8,
      whiten: false,
    });
    // t=7: δ = 1 − 0.4 = 0.6;                A = 0.6
    // t=6: δ = 0.9·0.4 − 0.3 = 0.06;         A = 0.06 + 0.72·0.6 = 0.492
    // t=3: δ = 0.5 + 0.9·0.3 − 0.2 = 0.57;   A = 0.57 + 0.72·0.492 = 0.92424
    // t=2: δ = 0.9·0.2 − 0.1 = 0.08;         A = 0.08 + 0.72·0.92424 = 0.7454528
    expectClose(advantages[0], [0, 0, 0.7454528, 0.92424, 0, 0, 0.492, 0.6]);
    expectClose(returns[0], [0, 0, 0.8454528, 1.12424, 0, 0, 0.792, 1.0]);
  });

  it('applies γ once per action token, not per observation token', () => {
    const { advantages } = computeGaeAdvantages({
      rewards: [rewardRow(1)],
      actionMask: [M],
      values: [M.map(() => 0)],
      gamma: 0.5,
      lambda: 1,
      whiten: false,
    });
    expectClose(advantages[0], [0, 0, 0.125, 0.25, 0, 0, 0.5, 1]);
  });

  it('whitens over the action tokens of the batch by default', () => {
    const { advantages, returns } = computeGaeAdvantages({
      rewards: [rewardRow(1, 0.5)],
      actionMask: [M],
      values: [[9, 9, 0.1, 0.2, 9, 9, 0.3, 0.4]],
      gamma: 0.9,
      lambda: 0.8,
    });
    const raw = [0.7454528, 0.92424, 0.492, 0.6];
    const mean = 2.7616928 / 4;
    const variance = raw.reduce((s, a) => s + (a - mean) ** 2, 0) / 3;
    const w = raw.map((a) => (a - mean) / Math.sqrt(variance + 1e-8));
    expectClose(advantages[0], [0, 0, w[0], w[1], 0, 0, w[2], w[3]]);
    expectClose(returns[0], [0, 0, 0.8454528, 1.12424, 0, 0, 0.792, 1.0]);
  });
});

describe('GRPO, RLOO and REINFORCE++', () => {
  // Group 0: scores 1, 0, 2 (row 0 has 0.5 of process reward + 0.5 outcome). Group 1: identical 0.5, 0.5.
  // Group 2: one sample scoring 0.7.
  const rewards = [
    rewardRow(0.5, 0.5),
    rewardRow(0),
    rewardRow(2),
    rewardRow(0.5),
    rewardRow(0.5),
    rewardRow(0.7),
  ];
  const actionMask = rewards.map(() => M);
  const groups = [0, 0, 0, 1, 1, 2];

  it('scores are the sum of rewards on action tokens', () => {
    expect(sequenceScores(rewards, actionMask)).toEqual([1, 0, 2, 0.5, 0.5, 0.7]);
    // A reward on an observation position is not the policy's doing and is ignored.
    expect(sequenceScores([[0, 0, 0, 0, 5, 0, 0, 1]], [M])).toEqual([1]);
  });

  it('GRPO normalises by the group mean and unbiased std (+ eps), broadcast to action tokens', () => {
    const { advantages, returns } = computeGrpoAdvantages({ rewards, actionMask, groups });
    // Group 0: mean 1, std √((0 + 1 + 1) / 2) = 1.
    const expected = [0, -1 / (1 + 1e-6), 1 / (1 + 1e-6), 0, 0, 0.7 / (1 + 1e-6)];
    expectBroadcast(advantages, expected);
    expect(returns).toBe(advantages);
    for (const row of advantages) for (const x of row) expect(Number.isNaN(x)).toBe(false);
  });

  it('GRPO without std normalisation subtracts the group mean only', () => {
    const { advantages } = computeGrpoAdvantages({ rewards, actionMask, groups, normalizeByStd: false });
    expectBroadcast(advantages, [0, -1, 1, 0, 0, 0.7]);
  });

  it('GRPO: a group of identical scores gets exactly 0, not NaN, with any eps', () => {
    const { advantages } = computeGrpoAdvantages({
      // 0.1 + 0.1 + 0.1 rounds: the mean must still centre identical scores to exactly 0.
      rewards: [rewardRow(0.1), rewardRow(0.1), rewardRow(0.1)],
      actionMask: [M, M, M],
      groups: [3, 3, 3],
      eps: 0,
    });
    for (const row of advantages) expect(Array.from(row)).toEqual(M.map(() => 0));
  });

  it('RLOO subtracts the mean of the other samples of the group', () => {
    const { advantages } = computeRlooAdvantages({ rewards, actionMask, groups });
    // 1 − (0 + 2)/2 = 0; 0 − (1 + 2)/2 = −1.5; 2 − (1 + 0)/2 = 1.5; identical pair 0; single keeps 0.7.
    expectBroadcast(advantages, [0, -1.5, 1.5, 0, 0, 0.7]);
  });

  it('REINFORCE++ whitens the discounted return-to-go over all action tokens', () => {
    const { advantages, returns } = computeReinforcePlusPlusAdvantages({
      rewards: [rewardRow(1, 0.5)],
      actionMask: [M],
      gamma: 0.5,
    });
    // G7 = 1, G6 = 0.5, G3 = 0.5 + 0.5·0.5 = 0.75 (credit crosses the observation), G2 = 0.375.
    expectClose(returns[0], [0, 0, 0.375, 0.75, 0, 0, 0.5, 1]);
    // mean 0.65625; squared deviations sum to 0.23046875; unbiased variance over 3.
    const s = Math.sqrt(0.23046875 / 3 + 1e-8);
    expectClose(advantages[0], [0, 0, -0.28125 / s, 0.09375 / s, 0, 0, -0.15625 / s, 0.34375 / s]);
  });

  it('REINFORCE++-baseline whitens score − group mean over all action tokens of the batch', () => {
    const five = rewards.slice(0, 5);
    const { advantages } = computeReinforcePlusPlusBaselineAdvantages({
      rewards: five,
      actionMask: five.map(() => M),
      groups: groups.slice(0, 5),
    });
    // Centred scores 0, −1, 1, 0, 0 on 4 tokens each: mean 0, unbiased variance (4 + 4) / 19.
    const s = Math.sqrt(8 / 19 + 1e-8);
    expectBroadcast(advantages, [0, -1 / s, 1 / s, 0, 0]);
  });
});

describe('KL in the reward', () => {
  it('subtracts β·(logp − logp_ref) on action tokens only', () => {
    const { rewards, kl, meanKl } = applyKlPenalty({
      rewards: [rewardRow(1, 0.5)],
      actionMask: [M],
      logprobs: [[0, 0, -0.5, -0.6, 0, 0, -0.7, -0.8]],
      refLogprobs: [[0, 0, -0.4, -0.9, -3, -3, -0.7, -1.0]],
      beta: 0.5,
    });
    expectClose(kl[0], [0, 0, -0.1, 0.3, 0, 0, 0, 0.2]);
    expectClose(rewards[0], [0, 0, 0.05, 0.35, 0, 0, 0, 0.9]);
    expect(meanKl).toBeCloseTo(0.1, 12);
  });

  it('per-token estimators k1, k2, k3', () => {
    expect(klEstimate(-0.5, -0.4)).toBeCloseTo(-0.1, 12);
    expect(klEstimate(-0.5, -0.4, 'k2')).toBeCloseTo(0.005, 12);
    expect(klEstimate(-0.5, -0.4, 'k3')).toBeCloseTo(Math.exp(0.1) - 1.1, 12);
    expect(klEstimate(-0.5, -0.4, 'low_var_kl')).toBeCloseTo(Math.exp(0.1) - 1.1, 12);
    expect(klEstimate(-30, 0, 'k3')).toBe(10);
  });
});

import { describe, expect, it } from 'vitest';
import {
  buildBatch,
  explainedVariance,
  maskedCount,
  maskedMean,
  maskedStd,
  maskedVar,
  maskedWhiten,
  rowsToTensor,
} from '../src/index.js';
import type { Trajectory as Traj } from '../src/mdp/trajectory.js';

/** prompt [0, 2), action 1 [2, 4), observation [4, 6), action 2 [6, 8). */
function twoTurn(group = 0, outcome = 1, process = 0.5): Traj {
  return {
    group,
    promptLength: 2,
    tokens: [10, 11, 20, 21, 30, 31, 40, 41],
    actionMask: [0, 0, 1, 1, 0, 0, 1, 1],
    logprobs: [0, 0, -0.5, -0.6, 0, 0, -0.7, -0.8],
    turns: [
      { actionStart: 2, actionEnd: 4, observationStart: 4, observationEnd: 6 },
      { actionStart: 6, actionEnd: 8, observationStart: 8, observationEnd: 8 },
    ],
    toolCalls: [],
    rewards: [
      { position: 3, value: process, kind: 'process' },
      { position: 7, value: outcome, kind: 'outcome' },
    ],
    finishReason: 'done',
    info: {},
  };
}

/** prompt [0, 1), action [1, 3), observation [3, 4) left dangling (max_turns); outcome recorded at 3. */
function truncated(): Traj {
  return {
    group: 1,
    promptLength: 1,
    tokens: [5, 6, 7, 8],
    actionMask: [0, 1, 1, 0],
    logprobs: [0, -0.1, -0.2, 0],
    turns: [{ actionStart: 1, actionEnd: 3, observationStart: 3, observationEnd: 4 }],
    toolCalls: [],
    rewards: [
      { position: 3, value: -1, kind: 'outcome' },
      { position: 3, value: 0.25, kind: 'format' },
    ],
    finishReason: 'max_turns',
    info: {},
  };
}

const rows = (xs: ArrayLike<number>[]) => xs.map((r) => Array.from(r));

function expectClose(actual: ArrayLike<number>, expected: number[]): void {
  expect(actual.length).toBe(expected.length);
  for (const [i, e] of expected.entries()) expect(actual[i]).toBeCloseTo(e, 12);
}

describe('buildBatch', () => {
  it('lays out 150,000 trajectories (more than a call takes arguments) without overflowing the stack', () => {
    // train.promptsPerStep=100000 failed with "Maximum call stack size exceeded" (issue #35).
    const many = [...Array<Traj>(149_999).fill(twoTurn()), truncated()];
    const b = buildBatch(many, { minLength: 3 });
    expect([b.size, b.length]).toEqual([150_000, 8]);
    expect(buildBatch([truncated()], { minLength: 6 }).length).toBe(6);
  });

  it('pads to the longest trajectory and lays out masks, log-probs and rewards per token', () => {
    const b = buildBatch([twoTurn(), truncated()], { padTokenId: -1 });
    expect(b.size).toBe(2);
    expect(b.length).toBe(8);
    expect(rows(b.tokens)).toEqual([
      [10, 11, 20, 21, 30, 31, 40, 41],
      [5, 6, 7, 8, -1, -1, -1, -1],
    ]);
    expect(rows(b.actionMask)).toEqual([
      [0, 0, 1, 1, 0, 0, 1, 1],
      [0, 1, 1, 0, 0, 0, 0, 0],
    ]);
    expect(rows(b.responseMask)).toEqual([
      [0, 0, 1, 1, 1, 1, 1, 1],
      [0, 1, 1, 1, 0, 0, 0, 0],
    ]);
    expect(rows(b.attentionMask)).toEqual([
      [1, 1, 1, 1, 1, 1, 1, 1],
      [1, 1, 1, 1, 0, 0, 0, 0],
    ]);
    expect(rows(b.oldLogprobs)).toEqual([
      [0, 0, -0.5, -0.6, 0, 0, -0.7, -0.8],
      [0, -0.1, -0.2, 0, 0, 0, 0, 0],
    ]);
    // Outcome on the last action token; the format reward recorded on an observation moves back to it too.
    expect(rows(b.rewards)).toEqual([
      [0, 0, 0, 0.5, 0, 0, 0, 1],
      [0, 0, -0.75, 0, 0, 0, 0, 0],
    ]);
    expect(b.promptLengths).toEqual([2, 1]);
    expect(b.responseLengths).toEqual([6, 3]);
    expect(b.lengths).toEqual([8, 4]);
    expect(b.groups).toEqual([0, 1]);
  });

  it('drops process rewards when told to, and pads to minLength', () => {
    const b = buildBatch([twoTurn()], { includeProcessRewards: false, minLength: 10 });
    expect(b.length).toBe(10);
    expect(Array.from(b.rewards[0])).toEqual([0, 0, 0, 0, 0, 0, 0, 1, 0, 0]);
    expect(Array.from(b.tokens[0].subarray(8))).toEqual([0, 0]);
  });

  it('rejects misaligned trajectories', () => {
    const bad = { ...twoTurn(), logprobs: [0, 0] };
    expect(() => buildBatch([bad])).toThrow(/8 tokens but 8 action-mask entries and 2 log-probs/);
  });

  it('rowsToTensor makes an [N, L] tensor', () => {
    const b = buildBatch([twoTurn(), truncated()]);
    const t = rowsToTensor(b.tokens, { dtype: 'int32' });
    expect(t.shape).toEqual([2, 8]);
    expect(t.dtype).toBe('int32');
    expect(t.toArraySync()).toEqual(rows(b.tokens));
    const m = rowsToTensor(b.actionMask, { dtype: 'float64' });
    expect(m.toArraySync()).toEqual(rows(b.actionMask));
  });
});

describe('masked statistics', () => {
  const values = [
    [1, 100, 3],
    [5, -7, 100],
  ];
  const mask = [
    [1, 0, 1],
    [1, 1, 0],
  ];

  it('mean, unbiased variance and std over the kept entries only', () => {
    expect(maskedCount(mask)).toBe(4);
    expect(maskedMean(values, mask)).toBe(0.5);
    // deviations 0.5, 2.5, 4.5, -7.5: squares sum 83, over n - 1 = 3
    expect(maskedVar(values, mask)).toBeCloseTo(83 / 3, 12);
    expect(maskedVar(values, mask, false)).toBeCloseTo(83 / 4, 12);
    expect(maskedStd(values, mask)).toBeCloseTo(Math.sqrt(83 / 3), 12);
    expect(
      maskedMean(values, [
        [0, 0, 0],
        [0, 0, 0],
      ]),
    ).toBe(0);
  });

  it('whitening gives zero mean, unit variance, and 0 where masked', () => {
    const w = maskedWhiten(values, mask);
    const s = Math.sqrt(83 / 3 + 1e-8);
    expectClose(w[0], [0.5 / s, 0, 2.5 / s]);
    expectClose(w[1], [4.5 / s, -7.5 / s, 0]);
    const unshifted = maskedWhiten(values, mask, { shiftMean: false });
    expect(unshifted[0][0]).toBeCloseTo(0.5 / s + 0.5, 12);
    // A single kept value whitens to 0, not NaN.
    expect(Array.from(maskedWhiten([[3, 4]], [[1, 0]])[0])).toEqual([0, 0]);
  });

  it('explained variance is 1 − Var[R − V] / Var[R] (verl, eps 1e-5)', () => {
    const ev = explainedVariance([[1, 2, 2, 99]], [[1, 2, 3, 0]], [[1, 1, 1, 0]]);
    expect(ev).toBeCloseTo(1 - 1 / 3 / (1 + 1e-5), 12);
    expect(explainedVariance([[1, 2, 3]], [[1, 2, 3]], [[1, 1, 1]])).toBe(1);
  });
});

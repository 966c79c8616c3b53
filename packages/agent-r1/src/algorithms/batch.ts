/**
 * From trajectories to padded per-token arrays [N, L]: row i is trajectory i, column t is token t of the
 * whole sequence (prompt, actions and observations, as in Trajectory.tokens), right-padded to the longest.
 * The advantage estimators and the losses index tokens the same way.
 */
import { type DType, type Tensor, type TensorOptions, tensor } from '@agent-r1/tensor';
import type { Trajectory } from '../mdp/trajectory.js';
import type { TokenRows } from './metrics.js';

export interface BatchOptions {
  /**
   * Keep the tools' process rewards at their positions (default true). When false only outcome and format
   * rewards are placed, for the ablation that trains on the outcome alone.
   */
  includeProcessRewards?: boolean;
  /** Token id written into padding (default 0). */
  padTokenId?: number;
  /** Pad every row to at least this many tokens (default: the longest trajectory). */
  minLength?: number;
}

export interface TrajectoryBatch {
  /** N, the number of trajectories. */
  size: number;
  /** L, the padded length. */
  length: number;
  tokens: Int32Array[];
  /** 1 on the policy's tokens (what the loss trains on), 0 on prompt, observations and padding. */
  actionMask: Float64Array[];
  /**
   * 1 on every non-padding token after the prompt (actions and observations): the mask the losses use
   * only in the paper's ablation without the action mask.
   */
  responseMask: Float64Array[];
  /** 1 on every non-padding token (prompt included), for the forward pass. */
  attentionMask: Float64Array[];
  /** Behaviour log-probabilities of the action tokens (0 elsewhere). */
  oldLogprobs: Float64Array[];
  /**
   * Rewards at token positions, on action tokens only: each outcome reward at the trajectory's last action
   * token; process and format rewards at their recorded positions (the last token of the action that earned
   * them, moved back to the nearest action token at or before it if they point elsewhere).
   */
  rewards: Float64Array[];
  promptLengths: number[];
  /** Tokens after the prompt (actions and observations). */
  responseLengths: number[];
  /** Tokens in all (prompt included), before padding. */
  lengths: number[];
  /** Trajectory.group of each row: rows sharing it form a GRPO/RLOO group. */
  groups: number[];
}

/** Lays a list of trajectories out as padded [N, L] arrays. */
export function buildBatch(trajectories: readonly Trajectory[], options: BatchOptions = {}): TrajectoryBatch {
  const { includeProcessRewards = true, padTokenId = 0, minLength = 0 } = options;
  const length = trajectories.reduce((most, t) => Math.max(most, t.tokens.length), Math.max(minLength, 0));
  const batch: TrajectoryBatch = {
    size: trajectories.length,
    length,
    tokens: [],
    actionMask: [],
    responseMask: [],
    attentionMask: [],
    oldLogprobs: [],
    rewards: [],
    promptLengths: [],
    responseLengths: [],
    lengths: [],
    groups: [],
  };
  trajectories.forEach((traj, i) => {
    const n = traj.tokens.length;
    if (traj.actionMask.length !== n || traj.logprobs.length !== n) {
      throw new Error(
        `buildBatch: trajectory ${i} has ${n} tokens but ${traj.actionMask.length} action-mask entries and ${traj.logprobs.length} log-probs`,
      );
    }
    const tokens = new Int32Array(length).fill(padTokenId);
    const actionMask = new Float64Array(length);
    const responseMask = new Float64Array(length);
    const attentionMask = new Float64Array(length);
    const oldLogprobs = new Float64Array(length);
    const rewards = new Float64Array(length);
    let lastAction = -1;
    for (let t = 0; t < n; t++) {
      tokens[t] = traj.tokens[t];
      attentionMask[t] = 1;
      if (t >= traj.promptLength) responseMask[t] = 1;
      if (traj.actionMask[t] !== 0) {
        actionMask[t] = 1;
        oldLogprobs[t] = traj.logprobs[t];
        lastAction = t;
      }
    }
    for (const r of traj.rewards) {
      if (r.kind === 'process' && !includeProcessRewards) continue;
      if (lastAction < 0)
        throw new Error(`buildBatch: trajectory ${i} has a ${r.kind} reward but no action token to credit`);
      let pos = r.kind === 'outcome' ? lastAction : Math.min(r.position, n - 1);
      while (pos >= 0 && actionMask[pos] === 0) pos--;
      if (pos < 0)
        throw new Error(
          `buildBatch: trajectory ${i} places a ${r.kind} reward at token ${r.position}, before any action token`,
        );
      rewards[pos] += r.value;
    }
    batch.tokens.push(tokens);
    batch.actionMask.push(actionMask);
    batch.responseMask.push(responseMask);
    batch.attentionMask.push(attentionMask);
    batch.oldLogprobs.push(oldLogprobs);
    batch.rewards.push(rewards);
    batch.promptLengths.push(traj.promptLength);
    batch.responseLengths.push(n - traj.promptLength);
    batch.lengths.push(n);
    batch.groups.push(traj.group);
  });
  return batch;
}

/**
 * The rows of the tokens a loss looks at: the action mask, or the response mask in the ablation without it
 * (`lossMask` makes the same choice between the tensors of a mini-batch).
 */
export function lossRows(batch: TrajectoryBatch, useActionMask: boolean): Float64Array[] {
  return useActionMask ? batch.actionMask : batch.responseMask;
}

/**
 * `rows` of the batch, shortest trajectory first (ties in row order): cut into groups, each group's pass can
 * run to its own longest row and pad little.
 */
export function byLength(batch: TrajectoryBatch, rows: readonly number[]): number[] {
  return [...rows].sort((a, b) => batch.lengths[a] - batch.lengths[b] || a - b);
}

/** Copies equal-length rows into one [N, L] tensor (float32 unless options.dtype says otherwise). */
export function rowsToTensor(rows: TokenRows, options: TensorOptions = {}): Tensor {
  const n = rows.length;
  const l = n === 0 ? 0 : rows[0].length;
  const dtype: DType = options.dtype ?? 'float32';
  const flat = dtype === 'int32' ? new Int32Array(n * l) : new Float64Array(n * l);
  rows.forEach((row, i) => {
    if (row.length !== l) throw new Error(`rowsToTensor: row ${i} has ${row.length} entries, row 0 has ${l}`);
    for (let t = 0; t < l; t++) flat[i * l + t] = row[t];
  });
  return tensor(flat, { ...options, dtype, shape: [n, l] });
}

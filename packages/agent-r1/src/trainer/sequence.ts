/**
 * One batched forward pass of the policy (or critic) over trajectories, giving per-token quantities in the
 * token layout of TrajectoryBatch: column t holds the log-probability of token t given tokens < t, and the
 * value of that state (tokens < t), as verl aligns them; column 0, which nothing predicts, is 0.
 */
import type { ForwardOptions, TransformerLM } from '@agent-r1/nn';
import {
  type Tensor,
  concat,
  logprobs as gatherLogprobs,
  scatterAdd,
  tensor,
  tidy,
  zeros,
} from '@agent-r1/tensor';
import { tokenEntropy } from '../algorithms/losses.js';
import type { TrajectoryBatch } from '../algorithms/batch.js';

export interface SequenceOptions {
  /** The sampling temperature the logits are divided by (default 1). */
  temperature?: number;
  /**
   * Per row of the batch (indexed like batch.tokens), the token columns whose log-probs are wanted: its
   * non-zero entries (e.g. the loss mask). Only those get logits; the other columns are 0. Default: all.
   */
  needed?: readonly ArrayLike<number>[];
  /** Also the entropy of the distribution predicting each needed token. */
  entropy?: boolean;
  /**
   * Tokens the pass runs over: at least the rows' longest (the default), at most the batch's length. A
   * longer pass computes padding that changes no row's result, but it keeps the order of the weight
   * gradients' sums, and so the bits, of a pass over the whole batch.
   */
  length?: number;
  /** Residual dropout for a training pass (TransformerLM's `dropout` forward option); default none. */
  dropout?: ForwardOptions['dropout'];
}

export interface SequenceOutputs {
  /** [n, L] log-probs of each token (0 in column 0, and in columns not needed). */
  logprobs: Tensor;
  /** [n, L] the entropy of the temperature-scaled distribution predicting token t, when asked (0 elsewhere). */
  entropy: Tensor | null;
  /** [n, L] values V(tokens < t) when the model has a value head. */
  values: Tensor | null;
}

/**
 * Rows `rows` of the batch, as the model's int32 input, cut to their first `length` tokens (default: the
 * batch's padded length).
 */
export function batchIds(
  batch: TrajectoryBatch,
  rows: readonly number[],
  device?: string,
  length = batch.length,
): Tensor {
  const data = new Int32Array(rows.length * length);
  for (const [i, r] of rows.entries()) data.set(batch.tokens[r].subarray(0, length), i * length);
  return tensor(data, { shape: [rows.length, length], device });
}

/** [n, l] → [n, L]: zero columns after the first l (the padding a shorter pass skipped). */
function padColumns(t: Tensor, L: number): Tensor {
  const [n, l] = t.shape;
  return l === L ? t : concat([t, zeros([n, L - l], { dtype: t.dtype, device: t.device })], 1);
}

/**
 * The input positions whose logits predict the needed tokens of each row (token t is predicted at t - 1;
 * the model pads the lists to Q), with, per entry of the padded [n, Q] layout, its column in the [n, L]
 * layout, whether it is real (padding goes to column 0 with weight 0) and the token it predicts.
 */
function neededPositions(
  batch: TrajectoryBatch,
  rows: readonly number[],
  needed: readonly ArrayLike<number>[],
) {
  const positions = rows.map((r) => {
    const out: number[] = [];
    const mask = needed[r];
    for (let t = 1; t < batch.lengths[r]; t++) if (mask[t]) out.push(t - 1);
    return out;
  });
  const Q = positions.reduce((most, p) => Math.max(most, p.length), 1);
  const column = new Int32Array(rows.length * Q);
  const valid = new Float64Array(rows.length * Q);
  const target = new Int32Array(rows.length * Q);
  positions.forEach((p, i) => {
    for (let q = 0; q < p.length; q++) {
      column[i * Q + q] = p[q] + 1;
      valid[i * Q + q] = 1;
      target[i * Q + q] = batch.tokens[rows[i]][p[q] + 1];
    }
  });
  return { positions, Q, column, valid, target };
}

/** Runs `model` on rows of the batch (gradients flow unless called under noGrad). */
export function sequenceForward(
  model: TransformerLM,
  batch: TrajectoryBatch,
  rows: readonly number[],
  options: SequenceOptions = {},
): SequenceOutputs {
  const temperature = options.temperature ?? 1;
  return tidy(() => {
    // The pass runs over the rows' own longest sequence (T), not the whole batch's (L), unless `length`
    // asks for more: causal attention never looks at the padding after a row's tokens, so it changes
    // nothing they compute (but the last bits where the wasm kernels normalise the copy head over the
    // pass's width). The outputs keep the batch's [n, L] layout, zero past T.
    const L = batch.length;
    const longest = Math.max(1, ...rows.map((r) => batch.lengths[r]));
    const T = Math.max(longest, Math.min(L, options.length ?? 0));
    const n = rows.length;
    const device = model.config.device;
    const ids = batchIds(batch, rows, device, T);
    const lengths = rows.map((r) => Math.max(0, batch.lengths[r] - 1));
    const inputs = ids.narrow(1, 0, T - 1).contiguous();
    // The copy head indexes by token on the host: give it the rows rather than have it read `inputs` back.
    const tokens = rows.map((r) => batch.tokens[r]);
    const first = (values: Tensor) => zeros([n, 1], { dtype: values.dtype, device: values.device });
    const scale = (logits: Tensor) => (temperature === 1 ? logits : logits.div(temperature));
    // Sequences of one token predict nothing: the full pass handles that empty case.
    if (!options.needed || T < 2) {
      const { logits: raw, values } = model.forward(inputs, { lengths, tokens, dropout: options.dropout });
      const logits = scale(raw);
      const lp = gatherLogprobs(logits, ids.narrow(1, 1, T - 1).contiguous());
      const entropy = options.entropy ? concat([first(lp), tokenEntropy(logits)], 1) : null;
      return {
        logprobs: padColumns(concat([first(lp), lp], 1), L),
        entropy: entropy && padColumns(entropy, L),
        values: values ? padColumns(concat([first(values), values], 1), L) : null,
      };
    }
    const at = neededPositions(batch, rows, options.needed);
    const { logits: raw, values } = model.forward(inputs, {
      lengths,
      positions: at.positions,
      tokens,
      dropout: options.dropout,
    });
    const logits = scale(raw);
    const dtype = logits.dtype;
    const column = tensor(at.column, { shape: [n, at.Q], device });
    const valid = tensor(at.valid, { shape: [n, at.Q], dtype, device });
    const target = tensor(at.target, { shape: [n, at.Q], device });
    // Into the [n, L] layout: padding entries add 0 to column 0, which nothing predicts.
    const spread = (perToken: Tensor) =>
      scatterAdd(zeros([n, L], { dtype, device }), 1, column, perToken.mul(valid));
    return {
      logprobs: spread(gatherLogprobs(logits, target)),
      entropy: options.entropy ? spread(tokenEntropy(logits)) : null,
      values: values ? padColumns(concat([first(values), values], 1), L) : null,
    };
  });
}

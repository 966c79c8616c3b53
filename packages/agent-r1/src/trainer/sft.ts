/**
 * Supervised warm start: maximise the log-likelihood of demonstration actions. Optionally the tokens the
 * policy did not write (prompt and observations) join the loss with a smaller weight: language-model
 * training on the same sequences, which teaches a model trained from scratch to read the documents it is
 * shown (the RL losses never do this: they keep the action mask).
 */
import { type AdamW, type TransformerLM, clipGradNormAsync } from '@agent-r1/nn';
import { tidy } from '@agent-r1/tensor';
import { buildBatch, rowsToTensor } from '../algorithms/batch.js';
import type { Trajectory } from '../mdp/trajectory.js';
import { readScalars } from './read-scalars.js';
import { type SequenceOptions, sequenceForward } from './sequence.js';

export interface SftOptions {
  microBatchSize: number;
  gradClip: number;
  lr?: number;
  /** Weight of the loss on prompt and observation tokens relative to action tokens; default 0 (off). */
  contextWeight?: number;
  /**
   * Weight of each demonstration's last action (where a task's answer is), after its first token, relative
   * to its other actions; default 1. The answer is a few tokens of an episode's actions, so its share of the
   * loss is small.
   */
  answerWeight?: number;
  /**
   * Weight of each action's first token relative to the other action tokens; default 1. That token (a
   * tool's tag or the answer's) is where the policy chooses to act again or to answer: one token of an
   * episode's 60–100 action tokens, and the choice a small policy gets wrong from the question's wording.
   */
  decisionWeight?: number;
  /**
   * Weight of the tokens of each action that calls a named tool, after its first token, by tool name
   * (`compare` → 4); the others 1. A tool whose arguments are copied from far back (a compare call's labels
   * and figures) is a few tokens of an episode, as the answer is. Multiplies `answerWeight` where both apply.
   */
  toolWeights?: ReadonlyMap<string, number>;
  /** Residual dropout in the step's passes (TransformerLM's `dropout` forward option); default none. */
  dropout?: SequenceOptions['dropout'];
}

export interface SftStepResult {
  /**
   * Mean negative log-likelihood per action token (weighted by `answerWeight`, `decisionWeight` and
   * `toolWeights`).
   */
  loss: number;
  /** Mean negative log-likelihood per prompt/observation token (NaN when contextWeight is 0). */
  contextLoss: number;
}

/** Column 0 has no prediction; the rest of the non-padding tokens that are not actions are context. */
function contextMask(attention: Float64Array, action: Float64Array): Float64Array {
  const out = new Float64Array(attention.length);
  for (let t = 1; t < out.length; t++) out[t] = attention[t] - action[t];
  return out;
}

const count = (rows: readonly Float64Array[]) =>
  rows.reduce((n, row) => n + row.reduce((a, b) => a + b, 0), 0);

interface ActionWeights {
  answer: number;
  decision: number;
  tools: ReadonlyMap<string, number>;
}

const unweighted = (w: ActionWeights) =>
  w.answer === 1 && w.decision === 1 && [...w.tools.values()].every((x) => x === 1);

/**
 * The action mask weighted: each action's first token (the choice of tool or answer) by `decision`, the
 * last action's other tokens (the answer itself) by `answer`, and the other tokens of an action calling a
 * weighted tool by that tool's weight (the batch is right-padded). The answer's tag takes the decision
 * weight, not the answer's: weighting it as the answer would teach answering over a tool call as much as
 * the answer itself.
 */
function weightedActions(
  demos: readonly Trajectory[],
  actionMask: readonly Float64Array[],
  weights: ActionWeights,
) {
  return actionMask.map((mask, r) => {
    const { turns, toolCalls } = demos[r];
    const row = Float64Array.from(mask);
    const scaleAfterTag = (turn: (typeof turns)[number] | undefined, factor: number) => {
      if (turn) for (let t = turn.actionStart + 1; t < turn.actionEnd; t++) row[t] *= factor;
    };
    for (const turn of turns)
      if (turn.actionEnd > turn.actionStart) row[turn.actionStart] *= weights.decision;
    scaleAfterTag(turns.at(-1), weights.answer);
    // One factor per turn, however many calls of the tool the action holds.
    const toolTurns = new Map<number, number>();
    for (const call of toolCalls) {
      const factor = weights.tools.get(call.name);
      if (factor !== undefined) toolTurns.set(call.turn, factor);
    }
    for (const [turn, factor] of toolTurns) scaleAfterTag(turns[turn], factor);
    return row;
  });
}

/** One optimizer step on a batch of demonstrations. */
export async function sftStep(
  policy: TransformerLM,
  optimizer: AdamW,
  demos: readonly Trajectory[],
  options: SftOptions,
): Promise<SftStepResult> {
  const batch = buildBatch(demos);
  const w = options.contextWeight ?? 0;
  const context = w > 0 ? batch.attentionMask.map((a, r) => contextMask(a, batch.actionMask[r])) : null;
  const weights: ActionWeights = {
    answer: options.answerWeight ?? 1,
    decision: options.decisionWeight ?? 1,
    tools: options.toolWeights ?? new Map(),
  };
  const actions = unweighted(weights) ? batch.actionMask : weightedActions(demos, batch.actionMask, weights);
  // With weights, the action tokens count as their weights (the reported loss is their mean).
  const actionTokens = count(actions);
  const contextTokens = context ? count(context) : 0;
  // The loss is a weighted token-mean over the whole batch, so micro-batching does not change it.
  const denominator = actionTokens + w * contextTokens;
  optimizer.zeroGrad();
  let actionNll = 0;
  let contextNll = 0;
  for (let start = 0; start < batch.size; start += options.microBatchSize) {
    const rows = Array.from(
      { length: Math.min(options.microBatchSize, batch.size - start) },
      (_, i) => start + i,
    );
    const sums = tidy(() => {
      // Without the context in the loss, only the action tokens need logits. Each pass runs over the
      // whole batch's length, as before the RL update learnt to cut passes to their rows: the warm start
      // is where every table starts, and this preset's warm start moves with a change of rounding as far
      // as with a new seed (docs/history.md, 2026-12-05), while a cut would save it little.
      const { logprobs } = sequenceForward(policy, batch, rows, {
        ...(context ? {} : { needed: batch.actionMask }),
        length: batch.length,
        dropout: options.dropout,
      });
      const nll = logprobs.neg();
      const { dtype, device } = policy.config;
      const masked = (mask: readonly Float64Array[]) =>
        nll
          .mul(
            rowsToTensor(
              rows.map((r) => mask[r]),
              { dtype, device },
            ),
          )
          .sum();
      const action = masked(actions);
      const contextSum = context ? masked(context) : undefined;
      const loss = contextSum ? action.add(contextSum.mul(w)) : action;
      loss.div(denominator).backward();
      return { action, context: contextSum };
    });
    const read = await readScalars(sums);
    actionNll += read.action ?? 0;
    contextNll += read.context ?? 0;
  }
  await clipGradNormAsync(policy.parameters(), options.gradClip > 0 ? options.gradClip : Number.MAX_VALUE);
  optimizer.step(options.lr);
  return {
    loss: actionNll / Math.max(1, actionTokens),
    contextLoss: context ? contextNll / Math.max(1, contextTokens) : Number.NaN,
  };
}

/**
 * One RL step, in the order of the paper's algorithm:
 * prompts → rollout(policy, env) → rewards → reference log-probs and values → advantages → policy update →
 * metrics.
 */
import type { AdamW, TransformerLM } from '@agent-r1/nn';
import { type Generator, type Tensor, noGrad } from '@agent-r1/tensor';
import { applyKlPenalty } from '../algorithms/advantages.js';
import { buildBatch, byLength, lossRows } from '../algorithms/batch.js';
import { informativeGroups, renumberGroups } from '../algorithms/group-filter.js';
import { explainedVariance, maskedMean } from '../algorithms/metrics.js';
import type { AgentEnv } from '../mdp/env.js';
import { type Trajectory, actionTokenCount, totalReward } from '../mdp/trajectory.js';
import type { TextCodec } from '../rollout/config.js';
import { rollout } from '../rollout/engine.js';
import { computeAdvantages } from './advantage-step.js';
import type { TrainConfig } from './config.js';
import { updatePolicy } from './policy-update.js';
import { sequenceForward } from './sequence.js';

export interface RlContext<Example> {
  config: TrainConfig;
  policy: TransformerLM;
  optimizer: AdamW;
  /** Frozen initial policy for the KL term (null when klCoef is 0). */
  reference: TransformerLM | null;
  critic: TransformerLM | null;
  criticOptimizer: AdamW | null;
  codec: TextCodec;
  makeEnv: () => AgentEnv<Example>;
  stopTokens: readonly number[];
  stopStrings: readonly string[];
  /** The task's answer metrics: each is a step metric (the mean over trajectories that answered). */
  answerMetrics: readonly string[];
  generator: Generator;
}

export type StepMetrics = Record<string, number>;

/** [n, l] → n rows, read as a promise (so on every backend). */
async function readRows(t: Tensor): Promise<Float64Array[]> {
  const [n, l] = t.shape;
  const data = await t.data();
  return Array.from({ length: n }, (_, i) => Float64Array.from(data.subarray(i * l, (i + 1) * l)));
}

/** Per-token tensors of a frozen model over the whole batch (log-probs at the needed tokens), as rows. */
async function frozenPass(
  model: TransformerLM,
  batch: ReturnType<typeof buildBatch>,
  micro: number,
  temperature: number,
  needed: readonly Float64Array[],
) {
  const lp: Float64Array[] = new Array(batch.size);
  const values: Float64Array[] = [];
  // Shortest rows first, so that each pass pads little. A row's values do not depend on the rows beside it
  // but in the last bits, where the wasm kernels normalise the copy head over the pass's width.
  const order = byLength(
    batch,
    Array.from({ length: batch.size }, (_, i) => i),
  );
  for (let start = 0; start < batch.size; start += micro) {
    const idx = order.slice(start, start + micro);
    const out = noGrad(() => sequenceForward(model, batch, idx, { temperature, needed }));
    try {
      for (const [i, row] of (await readRows(out.logprobs)).entries()) lp[idx[i]] = row;
      if (out.values) for (const [i, row] of (await readRows(out.values)).entries()) values[idx[i]] = row;
    } finally {
      out.logprobs.dispose();
      out.values?.dispose();
    }
  }
  return { logprobs: lp, values: values.length ? values : null };
}

/**
 * The step's rollouts: `examples` once, or with `algorithm.filterGroups` their informative groups, refilled
 * from further prompts (`drawMore`) for up to `maxSampleRounds` rounds. A step that finds no informative
 * group updates on the first round, as without filtering (its GRPO and RLOO advantages are zero).
 */
async function collect<Example>(
  ctx: RlContext<Example>,
  examples: readonly Example[],
  drawMore: (() => Promise<readonly Example[]>) | undefined,
): Promise<{
  sampled: Trajectory[];
  trained: Trajectory[];
  rounds: number;
  /** Informative groups in the first round, and kept for the update. */
  informative: number;
  kept: number;
  tokens: number;
}> {
  const { algorithm, rollout: r } = ctx.config;
  let tokens = 0;
  const run = async (batch: readonly Example[]) => {
    const trajectories = await rollout({
      policy: ctx.policy,
      codec: ctx.codec,
      makeEnv: ctx.makeEnv,
      examples: batch,
      samplesPerExample: r.n,
      limits: r,
      sampling: {
        temperature: r.temperature,
        topK: r.topK || undefined,
        topP: r.topP,
        greedy: r.temperature === 0,
      },
      stopTokens: ctx.stopTokens,
      stopStrings: ctx.stopStrings,
      generator: ctx.generator,
    });
    tokens += trajectories.reduce((n, t) => n + actionTokenCount(t), 0);
    return trajectories;
  };
  const sampled = await run(examples);
  const all = examples.length;
  if (!algorithm.filterGroups)
    return { sampled, trained: sampled, rounds: 1, informative: all, kept: all, tokens };
  const groups = informativeGroups(sampled);
  const informative = groups.length;
  let rounds = 1;
  while (groups.length < examples.length && rounds < algorithm.maxSampleRounds && drawMore) {
    // A loop, not a spread: a round may add more groups than a call's arguments can hold.
    for (const group of informativeGroups(await run(await drawMore()))) groups.push(group);
    rounds++;
  }
  const kept = Math.min(groups.length, examples.length);
  const trained = kept > 0 ? renumberGroups(groups.slice(0, kept)) : sampled;
  return { sampled, trained, rounds, informative, kept, tokens };
}

/**
 * One RL step on `examples`; `drawMore` gives further prompts when dynamic sampling refills the batch. The
 * reward metrics describe the first round (the policy's own sample); the update and the batch metrics use
 * the trajectories trained on, which are returned.
 */
export async function rlStep<Example>(
  ctx: RlContext<Example>,
  examples: readonly Example[],
  lr: number,
  drawMore?: () => Promise<readonly Example[]>,
): Promise<{ metrics: StepMetrics; trajectories: Trajectory[] }> {
  const { config } = ctx;
  const { algorithm, rollout: r } = config;
  const t0 = performance.now();
  const collected = await collect(ctx, examples, drawMore);
  const { sampled, trained: trajectories, tokens } = collected;
  const t1 = performance.now();
  const batch = buildBatch(trajectories, { includeProcessRewards: algorithm.processRewards });
  const temperature = r.temperature > 0 ? r.temperature : 1;
  const micro = config.train.microBatchSize;
  // Log-probs are needed only where the loss looks (the KL in the reward looks at actions, a subset).
  const needed = lossRows(batch, algorithm.useActionMask);
  const ref =
    ctx.reference && algorithm.klCoef > 0
      ? (await frozenPass(ctx.reference, batch, micro, temperature, needed)).logprobs
      : null;
  const oldValues =
    algorithm.name === 'ppo'
      ? (await frozenPass(ctx.critic ?? ctx.policy, batch, micro, 1, needed)).values
      : null;
  let rewards = batch.rewards;
  let rewardKl = 0;
  if (ref && algorithm.klInReward) {
    const penalised = applyKlPenalty({
      rewards,
      actionMask: batch.actionMask,
      logprobs: batch.oldLogprobs,
      refLogprobs: ref,
      beta: algorithm.klCoef,
      estimator: algorithm.klType,
    });
    rewards = penalised.rewards;
    rewardKl = penalised.meanKl;
  }
  const { advantages, returns } = computeAdvantages(algorithm, {
    rewards,
    actionMask: batch.actionMask,
    groups: batch.groups,
    values: oldValues,
  });
  const t2 = performance.now();
  const update = await updatePolicy(
    config,
    {
      policy: ctx.policy,
      optimizer: ctx.optimizer,
      critic: ctx.critic,
      criticOptimizer: ctx.criticOptimizer,
    },
    { batch, advantages, returns, refLogprobs: algorithm.klInReward ? null : ref, oldValues },
    ctx.generator,
    lr,
  );
  const t3 = performance.now();
  const scores = sampled.map((t) => totalReward(t));
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
  const toolCalls = sampled.flatMap((t) => t.toolCalls);
  const actionTokens = trajectories.reduce((n, t) => n + actionTokenCount(t), 0);
  const metrics: StepMetrics = {
    reward: mean,
    rewardStd: Math.sqrt(scores.reduce((a, s) => a + (s - mean) ** 2, 0) / scores.length),
    ...Object.fromEntries(ctx.answerMetrics.map((k) => [k, meanInfo(sampled, k)])),
    turns: sampled.reduce((n, t) => n + t.turns.length, 0) / sampled.length,
    responseLength: batch.responseLengths.reduce((a, b) => a + b, 0) / batch.size,
    actionTokens: actionTokens / trajectories.length,
    toolCalls: toolCalls.length / sampled.length,
    toolSuccess: toolCalls.length ? toolCalls.filter((c) => c.success).length / toolCalls.length : Number.NaN,
    advantageMean: maskedMean(advantages, batch.actionMask),
    ...update,
    rewardKl,
    explainedVariance: oldValues ? explainedVariance(oldValues, returns, batch.actionMask) : Number.NaN,
    tokensPerSecond: tokens / ((t1 - t0) / 1000),
    rolloutSeconds: (t1 - t0) / 1000,
    prepareSeconds: (t2 - t1) / 1000,
    updateSeconds: (t3 - t2) / 1000,
    lr,
    ...(algorithm.filterGroups
      ? {
          informativeGroups: collected.informative / examples.length,
          keptGroups: collected.kept / examples.length,
          sampleRounds: collected.rounds,
        }
      : {}),
  };
  return { metrics, trajectories };
}

/**
 * Mean of a numeric `info` field: over the trajectories that report it (NaN when none do), or, with
 * `missingAsZero`, over all of them, counting a trajectory without it as 0 (an answer metric of a
 * trajectory that never answered).
 */
export function meanInfo(trajectories: readonly Trajectory[], key: string, missingAsZero = false): number {
  const values = trajectories.map((t) => t.info[key]);
  const xs = missingAsZero
    ? values.map((v) => (typeof v === 'number' ? v : 0))
    : values.filter((v): v is number => typeof v === 'number');
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;
}

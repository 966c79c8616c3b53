/**
 * Evaluation: each example's episode at temperature 0 (greedy), or `sampling.samples` sampled episodes of
 * each, summarised as reward, the task's answer metrics (a trajectory that never answered scores 0) and
 * tool use.
 */
import type { TransformerLM } from '@agent-r1/nn';
import { Generator } from '@agent-r1/tensor';
import { totalReward } from '../mdp/trajectory.js';
import type { Trajectory } from '../mdp/trajectory.js';
import type { RolloutLimits } from '../rollout/config.js';
import { type RolloutEvent, rollout } from '../rollout/engine.js';
import type { AgentTask } from '../tasks/task.js';
import { meanInfo } from '../trainer/rl-step.js';

export interface Evaluation {
  reward: number;
  /** Each of the task's answer metrics (`AgentTask.answerMetrics`), by key. */
  scores: Record<string, number>;
  toolCalls: number;
  turns: number;
  trajectories: Trajectory[];
}

/** How evaluation decodes: greedily (temperature 0, one episode per example), or sampled. */
export interface EvaluationSampling {
  /** 0: greedy. */
  temperature: number;
  /** Episodes per example, in order after the example's index (`t.group`); more than 1 only when sampled. */
  samples: number;
  /** Seed of the sampling draws. */
  seed: number;
}

export const GREEDY_EVALUATION: EvaluationSampling = { temperature: 0, samples: 1, seed: 0 };

/** The results table's sampling from the config's `eval.temperature`, `eval.samples` and `seed`. */
export const tableSampling = (config: {
  seed: number;
  eval: { temperature: number; samples: number };
}): EvaluationSampling => ({
  temperature: config.eval.temperature,
  samples: config.eval.samples,
  seed: config.seed,
});

export async function evaluate<Example>(
  policy: TransformerLM,
  task: AgentTask<Example>,
  examples: readonly Example[],
  limits: RolloutLimits,
  options: { onEvent?: (event: RolloutEvent) => void | Promise<void>; sampling?: EvaluationSampling } = {},
): Promise<Evaluation> {
  const { temperature, samples, seed } = options.sampling ?? GREEDY_EVALUATION;
  if (temperature === 0 && samples > 1)
    throw new Error(
      `evaluate: ${samples} samples per example need a temperature above 0 (greedy ones repeat)`,
    );
  const trajectories = await rollout({
    policy,
    codec: task.codec,
    makeEnv: () => task.makeEnv(),
    examples,
    samplesPerExample: samples,
    limits,
    sampling: temperature === 0 ? { temperature: 0, greedy: true } : { temperature },
    stopTokens: task.stopTokens,
    stopStrings: task.stopStrings,
    generator: new Generator(seed),
    onEvent: options.onEvent,
  });
  const n = Math.max(trajectories.length, 1);
  return {
    reward: trajectories.reduce((s, t) => s + totalReward(t), 0) / n,
    scores: Object.fromEntries((task.answerMetrics ?? []).map((k) => [k, meanInfo(trajectories, k, true)])),
    toolCalls: trajectories.reduce((s, t) => s + t.toolCalls.length, 0) / n,
    turns: trajectories.reduce((s, t) => s + t.turns.length, 0) / n,
    trajectories,
  };
}

/** The metrics-log key of a validation metric: 'em' → 'valEm'. */
export const validationKey = (metric: string) => `val${metric[0].toUpperCase()}${metric.slice(1)}`;

/** An evaluation as metrics-log fields: valReward, valToolCalls and val<Metric> for each answer metric. */
export function validationRecord(
  e: Pick<Evaluation, 'reward' | 'scores' | 'toolCalls'>,
): Record<string, number> {
  return {
    valReward: e.reward,
    valToolCalls: e.toolCalls,
    ...Object.fromEntries(Object.entries(e.scores).map(([k, v]) => [validationKey(k), v])),
  };
}

/** An evaluation in one line: reward, each answer metric, tool calls per episode. */
export function describeEvaluation(e: Pick<Evaluation, 'reward' | 'scores' | 'toolCalls'>): string {
  const scores = Object.entries(e.scores).map(([k, v]) => `, ${k} ${v.toFixed(3)}`);
  return `reward ${e.reward.toFixed(3)}${scores.join('')}, tools ${e.toolCalls.toFixed(2)}`;
}

/** Greedy evaluation: one trajectory per example at temperature 0, summarised as reward, EM and tool use. */
import type { TransformerLM } from '@agent-r1/nn';
import { Generator } from '@agent-r1/tensor';
import { totalReward } from '../mdp/trajectory.js';
import type { Trajectory } from '../mdp/trajectory.js';
import type { RolloutLimits } from '../rollout/config.js';
import { rollout } from '../rollout/engine.js';
import type { AgentTask } from '../tasks/task.js';
import { meanInfo } from './rl-step.js';

export interface Evaluation {
  reward: number;
  em: number;
  f1: number;
  toolCalls: number;
  turns: number;
  trajectories: Trajectory[];
}

export async function evaluate<Example>(
  policy: TransformerLM,
  task: AgentTask<Example>,
  examples: readonly Example[],
  limits: RolloutLimits,
): Promise<Evaluation> {
  const trajectories = await rollout({
    policy,
    codec: task.codec,
    makeEnv: () => task.makeEnv(),
    examples,
    samplesPerExample: 1,
    limits,
    sampling: { temperature: 0, greedy: true },
    stopTokens: task.stopTokens,
    stopStrings: task.stopStrings,
    generator: new Generator(0),
  });
  const n = Math.max(trajectories.length, 1);
  return {
    reward: trajectories.reduce((s, t) => s + totalReward(t), 0) / n,
    em: meanInfo(trajectories, 'em', task.answerMetrics?.includes('em')),
    f1: meanInfo(trajectories, 'f1', task.answerMetrics?.includes('f1')),
    toolCalls: trajectories.reduce((s, t) => s + t.toolCalls.length, 0) / n,
    turns: trajectories.reduce((s, t) => s + t.turns.length, 0) / n,
    trajectories,
  };
}

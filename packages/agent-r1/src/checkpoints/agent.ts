/**
 * A trained agent, however it was loaded (a folder in Node: ./load-agent.ts; fetched files in a page:
 * ./agent-from-files.ts): its description, config, task and policy, and `ask`, which runs one question
 * through the whole agent loop (the policy, its tools, the environment's observations), greedily.
 */
import type { TransformerLM } from '@agent-r1/nn';
import type { Trajectory } from '../mdp/trajectory.js';
import type { RolloutEvent } from '../rollout/engine.js';
import type { AgentTask } from '../tasks/task.js';
import type { TrainConfig } from '../trainer/config-definition.js';
import { evaluate } from '../evaluation/evaluate.js';
import type { AgentDescription } from './agent-description.js';

/** One question answered by the agent: each turn's action and observation, and the episode. */
export interface AgentAnswer {
  turns: { action: string; observation: string }[];
  /** The last action's text (where the answer is, for tasks that answer in their last action). */
  finalAction: string;
  reward: number;
  trajectory: Trajectory;
}

export interface AskOptions {
  /** Hears each token as it is generated and each turn as it ends (the rollout's events), e.g. to stream. */
  onEvent?: (event: RolloutEvent) => void | Promise<void>;
}

export interface LoadedAgent<Example = unknown> {
  /** The policy folder it was loaded from (or where its files came from). */
  dir: string;
  description: AgentDescription;
  config: TrainConfig;
  /** A line that says what the agent computes on (the backend). */
  backendLine: string;
  task: AgentTask<Example>;
  policy: TransformerLM;
  /** Runs `question` through the agent, greedily (tasks with `fromQuestion` only). */
  ask(question: string, options?: AskOptions): Promise<AgentAnswer>;
  /** Runs one of the task's own examples (e.g. a test question, scored against its gold answer), greedily. */
  run(example: Example, options?: AskOptions): Promise<AgentAnswer>;
  dispose(): void;
}

/** Reads one episode's turns as text. */
export function transcript(task: AgentTask<unknown>, t: Trajectory): AgentAnswer['turns'] {
  const text = (from: number, to: number) => task.codec.decode(t.tokens.slice(from, to));
  return t.turns.map((turn) => ({
    action: text(turn.actionStart, turn.actionEnd),
    observation: text(turn.observationStart, turn.observationEnd).trim(),
  }));
}

/** The agent of a loaded policy and its task: `ask`, `run` and `dispose` around them. */
export function describedAgent<Example>(
  parts: Omit<LoadedAgent<Example>, 'ask' | 'run' | 'dispose'>,
): LoadedAgent<Example> {
  const { task, policy, config } = parts;
  const run = async (example: Example, options: AskOptions = {}): Promise<AgentAnswer> => {
    const { trajectories } = await evaluate(policy, task, [example], config.rollout, options);
    const trajectory = trajectories[0];
    const turns = transcript(task as AgentTask<unknown>, trajectory);
    return {
      turns,
      finalAction: turns.at(-1)?.action ?? '',
      reward: trajectory.rewards.reduce((s, r) => s + r.value, 0),
      trajectory,
    };
  };
  return {
    ...parts,
    run,
    ask(question, options) {
      if (!task.fromQuestion)
        throw new Error(`task "${task.name}" cannot turn a typed question into an episode`);
      return run(task.fromQuestion(question), options);
    },
    dispose: () => policy.dispose(),
  };
}

/**
 * A trained agent from its checkpoint folder alone: the folder's agent.json names the task, its options
 * and the model; the run's config comes back from it (with any overrides), the backend is set up, the task
 * rebuilt and checked against the saved tokenizer, and the weights loaded. `ask` runs one question through
 * the whole agent loop (the policy, its tools, the environment's observations), greedily.
 */
import type { TransformerLM } from '@agent-r1/nn';
import type { Trajectory } from '../mdp/trajectory.js';
import { createTask } from '../tasks/registry.js';
import type { AgentTask } from '../tasks/task.js';
import { type AgentDescription, policyFolder, readAgentDescription } from './agent-files.js';
import { prepareBackend } from '../trainer/backend-setup.js';
import { type PartialTrainConfig, type TrainConfig, resolveConfig } from '../trainer/config.js';
import { evaluate } from '../evaluation/evaluate.js';
import { loadPolicyFrom } from '../evaluation/report.js';

/** One question answered by the agent: each turn's action and observation, and the episode. */
export interface AgentAnswer {
  turns: { action: string; observation: string }[];
  /** The last action's text (where the answer is, for tasks that answer in their last action). */
  finalAction: string;
  reward: number;
  trajectory: Trajectory;
}

export interface LoadedAgent<Example = unknown> {
  /** The policy folder it was loaded from. */
  dir: string;
  description: AgentDescription;
  config: TrainConfig;
  /** A line that says what the agent computes on (the backend). */
  backendLine: string;
  task: AgentTask<Example>;
  policy: TransformerLM;
  /** Runs `question` through the agent, greedily (tasks with `fromQuestion` only). */
  ask(question: string): Promise<AgentAnswer>;
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

/**
 * Loads the agent of a checkpoint folder (a policy folder, or a run's checkpoint.dir holding `policy/`).
 * `overrides` change the saved config (e.g. `backend`, `rollout.maxTurns`), as on the command line.
 */
export async function loadAgent<Example = unknown>(
  dir: string,
  options: { overrides?: readonly string[] | PartialTrainConfig } = {},
): Promise<LoadedAgent<Example>> {
  const folder = policyFolder(dir);
  const description = readAgentDescription(folder);
  if (!description)
    throw new Error(
      `${folder}: no agent.json (written before checkpoints described themselves): load it with loadPolicyFrom(dir, config, task) and the config it was trained with`,
    );
  const config = resolveConfig({ base: description.config, overrides: options.overrides });
  const backendLine = await prepareBackend(config);
  const task = (await createTask(config)) as AgentTask<Example>;
  const policy = await loadPolicyFrom(folder, config, task);
  return {
    dir: folder,
    description,
    config,
    backendLine,
    task,
    policy,
    async ask(question) {
      if (!task.fromQuestion)
        throw new Error(`task "${task.name}" cannot turn a typed question into an episode`);
      const { trajectories } = await evaluate(policy, task, [task.fromQuestion(question)], config.rollout);
      const trajectory = trajectories[0];
      const turns = transcript(task as AgentTask<unknown>, trajectory);
      return {
        turns,
        finalAction: turns.at(-1)?.action ?? '',
        reward: trajectory.rewards.reduce((s, r) => s + r.value, 0),
        trajectory,
      };
    },
    dispose: () => policy.dispose(),
  };
}

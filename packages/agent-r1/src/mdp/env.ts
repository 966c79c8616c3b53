/**
 * The environment side of the agent MDP. An episode starts from an example (a question, a task) with
 * `reset`, which gives the prompt text; each `step` receives the policy's action (its text, decoded for
 * parsing only, and its exact token ids) and answers with an observation to append, a reward and whether
 * the episode is over.
 */
import type { RewardKind, ToolCallRecord } from './trajectory.js';

export interface StepResult {
  /** Text appended to the context as observation tokens (e.g. a wrapped tool response); null for none. */
  observation: string | null;
  /** Rewards earned by this action, credited to its last token. */
  rewards: { value: number; kind: RewardKind }[];
  done: boolean;
  toolCalls: Omit<ToolCallRecord, 'turn'>[];
  info: Record<string, unknown>;
}

export interface AgentEnv<Example = unknown> {
  /** Starts an episode; returns the full prompt text (system prompt + question, in the chat template). */
  reset(example: Example): Promise<string> | string;
  step(actionText: string, actionTokens: readonly number[]): Promise<StepResult>;
}

/** Makes one environment per trajectory (episodes run concurrently and must not share state). */
export type EnvFactory<Example = unknown> = () => AgentEnv<Example>;

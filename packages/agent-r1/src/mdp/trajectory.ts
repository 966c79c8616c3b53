/**
 * A trajectory of the agent MDP, kept as token ids end to end: the prompt, then alternating actions (tokens
 * the policy sampled, never decoded and re-encoded) and observations (tokens the environment appended).
 */

export interface ToolCallRecord {
  /** Index of the turn whose action made the call. */
  turn: number;
  name: string;
  args: unknown;
  /** The observation text the tool returned (before truncation to the observation limit). */
  content: string;
  success: boolean;
  /** Process reward given by the tool, if any. */
  reward?: number;
}

export interface TurnSpan {
  /** [actionStart, actionEnd): the policy's tokens of this turn. */
  actionStart: number;
  actionEnd: number;
  /** [observationStart, observationEnd): the tokens appended by the environment after it (empty at the end). */
  observationStart: number;
  observationEnd: number;
}

export type RewardKind = 'outcome' | 'process' | 'format';

export interface PlacedReward {
  /** Token index the reward is credited to: the last token of the action that earned it. */
  position: number;
  value: number;
  kind: RewardKind;
}

export type FinishReason = 'done' | 'max_turns' | 'max_length';

export interface Trajectory {
  /** Which prompt of the batch it came from (trajectories of one prompt form a GRPO/RLOO group). */
  group: number;
  promptLength: number;
  tokens: number[];
  /** 1 where the policy generated the token, 0 for prompt and observation tokens. */
  actionMask: number[];
  /** Behaviour log-probability of each action token (0 elsewhere), as sampled. */
  logprobs: number[];
  turns: TurnSpan[];
  toolCalls: ToolCallRecord[];
  rewards: PlacedReward[];
  finishReason: FinishReason;
  /** Whatever the environment reports at the end (e.g. the answer, EM, F1). */
  info: Record<string, unknown>;
}

/** A trajectory holding only its prompt; `finishReason` is set when the episode ends. */
export function startTrajectory(
  group: number,
  prompt: readonly number[],
  finishReason: FinishReason = 'done',
): Trajectory {
  return {
    group,
    promptLength: prompt.length,
    tokens: [...prompt],
    actionMask: prompt.map(() => 0),
    logprobs: prompt.map(() => 0),
    turns: [],
    toolCalls: [],
    rewards: [],
    finishReason,
    info: {},
  };
}

/** Sum of the rewards of a trajectory, optionally of some kinds only. */
export function totalReward(t: Trajectory, kinds?: readonly RewardKind[]): number {
  return t.rewards.filter((r) => !kinds || kinds.includes(r.kind)).reduce((s, r) => s + r.value, 0);
}

/** The policy's tokens only (what the loss sees). */
export function actionTokenCount(t: Trajectory): number {
  return t.actionMask.reduce((s, m) => s + m, 0);
}

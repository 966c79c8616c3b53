/** The limits of a multi-turn rollout; each has one meaning, counted in tokens of the policy's vocabulary. */
export interface RolloutLimits {
  /** Most actions (policy turns) in one trajectory; the episode ends as 'max_turns' after the last. */
  maxTurns: number;
  /** Most tokens the policy may generate in one action; the action is then handed to the environment as is. */
  maxTokensPerTurn: number;
  /** Most tokens in a whole trajectory: prompt + actions + observations. */
  maxLength: number;
  /** Most tokens of one observation; longer ones are cut. */
  maxObservationTokens: number;
}

export interface RolloutSampling {
  temperature: number;
  topK?: number;
  topP?: number;
  greedy?: boolean;
  /**
   * How many of each example's samples decode greedily (its first ones), the rest as above: the policy that
   * greedy evaluation runs then joins every group (0 by default).
   */
  greedySamples?: number;
}

/** What the engine needs from a tokenizer: prompts and observations are encoded, actions decoded for parsing. */
export interface TextCodec {
  encode(text: string): number[];
  decode(ids: ArrayLike<number>): string;
}

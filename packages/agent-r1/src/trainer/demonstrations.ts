/**
 * Demonstration trajectories for the supervised warm start: a scripted (text) policy plays episodes in the
 * real environment, and its actions and the environment's observations are laid out as tokens exactly as
 * the rollout engine would lay out the policy's own (action tokens masked 1, observations 0).
 *
 * An episode is recorded as text first, so that the warm start can lay it out again with its text
 * rewritten (e.g. its entities renamed, see `AgentTask.renameEntities`).
 */
import type { AgentEnv } from '../mdp/env.js';
import type { TextPolicy } from '../mdp/text-episode.js';
import {
  type FinishReason,
  type RewardKind,
  type ToolCallRecord,
  type Trajectory,
  startTrajectory,
} from '../mdp/trajectory.js';
import type { RolloutLimits, TextCodec } from '../rollout/config.js';

export interface DemonstrationTurn {
  /** The action as the environment received it (already cut to the per-turn token limit). */
  action: string;
  /** The observation as the policy saw it (already cut to the observation limit); '' after the last turn. */
  observation: string;
  rewards: { value: number; kind: RewardKind }[];
}

/** One scripted episode, as text. */
export interface Demonstration {
  prompt: string;
  turns: DemonstrationTurn[];
  toolCalls: ToolCallRecord[];
  finishReason: FinishReason;
  info: Record<string, unknown>;
}

export async function recordDemonstration<Example>(
  env: AgentEnv<Example>,
  example: Example,
  policy: TextPolicy,
  codec: TextCodec,
  limits: RolloutLimits,
): Promise<Demonstration> {
  const prompt = codec.decode(codec.encode(await env.reset(example)));
  const demo: Demonstration = { prompt, turns: [], toolCalls: [], finishReason: 'max_turns', info: {} };
  let context = prompt;
  for (let turn = 0; turn < limits.maxTurns; turn++) {
    const action = codec.decode(codec.encode(await policy(context)).slice(0, limits.maxTokensPerTurn));
    if (action === '')
      throw new Error(`demonstrate: the scripted policy returned an empty action at turn ${turn}`);
    const result = await env.step(action, codec.encode(action));
    const observation =
      result.done || result.observation === null
        ? ''
        : codec.decode(codec.encode(result.observation).slice(0, limits.maxObservationTokens));
    demo.turns.push({ action, observation, rewards: result.rewards.map((r) => ({ ...r })) });
    for (const call of result.toolCalls) demo.toolCalls.push({ ...call, turn });
    Object.assign(demo.info, result.info);
    context += action + observation;
    if (result.done) {
      demo.finishReason = 'done';
      break;
    }
  }
  return demo;
}

/** Every text of a demonstration: its prompt, then each turn's action and observation. */
export function demonstrationTexts(demo: Demonstration): string[] {
  return [demo.prompt, ...demo.turns.flatMap((t) => [t.action, t.observation])];
}

/**
 * The demonstration as a trajectory, every text passed through `rewrite` first (the identity by default);
 * each action's rewards are credited to its last token.
 */
export function encodeDemonstration(
  demo: Demonstration,
  codec: TextCodec,
  limits: RolloutLimits,
  rewrite: (text: string) => string = (text) => text,
  group = 0,
): Trajectory {
  const traj = startTrajectory(group, codec.encode(rewrite(demo.prompt)), demo.finishReason);
  const append = (ids: number[], mask: 0 | 1) => {
    for (const t of ids) {
      traj.tokens.push(t);
      traj.actionMask.push(mask);
      traj.logprobs.push(0);
    }
  };
  for (const turn of demo.turns) {
    const actionStart = traj.tokens.length;
    append(codec.encode(rewrite(turn.action)).slice(0, limits.maxTokensPerTurn), 1);
    const last = traj.tokens.length - 1;
    for (const r of turn.rewards) traj.rewards.push({ position: last, ...r });
    append(codec.encode(rewrite(turn.observation)).slice(0, limits.maxObservationTokens), 0);
    traj.turns.push({
      actionStart,
      actionEnd: last + 1,
      observationStart: last + 1,
      observationEnd: traj.tokens.length,
    });
  }
  traj.toolCalls = demo.toolCalls.map((c) => ({ ...c }));
  traj.info = { ...demo.info };
  return traj;
}

/**
 * The demonstration laid out with its texts rewritten, or undefined when the rewrite makes the rollout
 * limits cut an action or observation that was whole (a cut observation loses its last documents and its
 * closing tag) or the whole trajectory longer than `maxLength`.
 */
export function rewriteDemonstration(
  demo: Demonstration,
  codec: TextCodec,
  limits: RolloutLimits,
  rewrite: (text: string) => string,
): Trajectory | undefined {
  const stillFits = (text: string, limit: number) =>
    codec.encode(rewrite(text)).length <= limit || codec.encode(text).length >= limit;
  const fits = demo.turns.every(
    (t) =>
      stillFits(t.action, limits.maxTokensPerTurn) && stillFits(t.observation, limits.maxObservationTokens),
  );
  if (!fits) return undefined;
  const traj = encodeDemonstration(demo, codec, limits, rewrite);
  return traj.tokens.length <= limits.maxLength ? traj : undefined;
}

/** Draws of new names per renamed demonstration before it is kept as it was (when none fits the limits). */
export const RENAME_TRIES = 4;

/**
 * The demonstration renamed as the warm start renames it: the first of up to RENAME_TRIES renamings drawn
 * by `draw` whose layout fits the limits (`rewriteDemonstration`), then, where none does and `toFit` is
 * set, of as many drawn as `draw('no-longer')` (`sft.renameToFit`, `train.renameToFit`); with that
 * renaming; undefined when none fits.
 */
export function renamedDemonstration<R extends { apply(text: string): string }>(
  demo: Demonstration,
  codec: TextCodec,
  limits: RolloutLimits,
  draw: (fit?: 'no-longer') => R,
  toFit = false,
): { trajectory: Trajectory; renaming: R } | undefined {
  const attempts = toFit ? 2 * RENAME_TRIES : RENAME_TRIES;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const renaming = draw(attempt < RENAME_TRIES ? undefined : 'no-longer');
    const trajectory = rewriteDemonstration(demo, codec, limits, (text) => renaming.apply(text));
    if (trajectory) return { trajectory, renaming };
  }
  return undefined;
}

/** One scripted episode laid out as a trajectory, no longer than the rollout's `maxLength`. */
export async function demonstrate<Example>(
  env: AgentEnv<Example>,
  example: Example,
  policy: TextPolicy,
  codec: TextCodec,
  limits: RolloutLimits,
  group = 0,
): Promise<Trajectory> {
  const traj = encodeDemonstration(
    await recordDemonstration(env, example, policy, codec, limits),
    codec,
    limits,
    undefined,
    group,
  );
  if (traj.tokens.length > limits.maxLength) {
    throw new Error(
      `demonstrate: a demonstration has ${traj.tokens.length} tokens, more than rollout maxLength ${limits.maxLength}`,
    );
  }
  return traj;
}

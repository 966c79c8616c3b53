/**
 * Demonstration trajectories for the supervised warm start: a scripted (text) policy plays episodes in the
 * real environment, and its actions and the environment's observations are laid out as tokens exactly as
 * the rollout engine would lay out the policy's own (action tokens masked 1, observations 0).
 */
import type { AgentEnv } from '../mdp/env.js';
import type { TextPolicy } from '../mdp/text-episode.js';
import { type Trajectory, startTrajectory } from '../mdp/trajectory.js';
import type { RolloutLimits, TextCodec } from '../rollout/config.js';

export async function demonstrate<Example>(
  env: AgentEnv<Example>,
  example: Example,
  policy: TextPolicy,
  codec: TextCodec,
  limits: RolloutLimits,
  group = 0,
): Promise<Trajectory> {
  const prompt = codec.encode(await env.reset(example));
  const traj = startTrajectory(group, prompt, 'max_turns');
  let context = codec.decode(prompt);
  const append = (ids: number[], mask: 0 | 1) => {
    for (const t of ids) {
      traj.tokens.push(t);
      traj.actionMask.push(mask);
      traj.logprobs.push(0);
    }
  };
  for (let turn = 0; turn < limits.maxTurns; turn++) {
    const text = await policy(context);
    const action = codec.encode(text).slice(0, limits.maxTokensPerTurn);
    if (action.length === 0)
      throw new Error(`demonstrate: the scripted policy returned an empty action at turn ${turn}`);
    const actionStart = traj.tokens.length;
    append(action, 1);
    const result = await env.step(codec.decode(action), action);
    const last = traj.tokens.length - 1;
    for (const r of result.rewards) traj.rewards.push({ position: last, value: r.value, kind: r.kind });
    for (const call of result.toolCalls) traj.toolCalls.push({ ...call, turn });
    Object.assign(traj.info, result.info);
    const observation =
      result.done || result.observation === null
        ? []
        : codec.encode(result.observation).slice(0, limits.maxObservationTokens);
    append(observation, 0);
    traj.turns.push({
      actionStart,
      actionEnd: last + 1,
      observationStart: last + 1,
      observationEnd: traj.tokens.length,
    });
    context += codec.decode(action) + codec.decode(observation);
    if (result.done) {
      traj.finishReason = 'done';
      break;
    }
  }
  if (traj.tokens.length > limits.maxLength) {
    throw new Error(
      `demonstrate: a demonstration has ${traj.tokens.length} tokens, more than rollout maxLength ${limits.maxLength}`,
    );
  }
  return traj;
}

/**
 * The batched multi-turn rollout engine (token in, token out). Every active trajectory samples its next
 * token together over one KV cache; an action ends on a stop token, a stop string or the per-turn limit and
 * goes to its environment (all ending actions of a step concurrently); the observation's tokens are appended
 * to the cache in the same pass as the action's last token, and the trajectory samples on. The policy's own
 * tokens are kept exactly as sampled: they are decoded only to be parsed, never re-encoded.
 */
import { type TransformerLM, extendAsync, sampleToken } from '@agent-r1/nn';
import { type Generator, rand } from '@agent-r1/tensor';
import type { AgentEnv, StepResult } from '../mdp/env.js';
import { type FinishReason, type Trajectory, type TurnSpan, startTrajectory } from '../mdp/trajectory.js';
import type { RolloutLimits, RolloutSampling, TextCodec } from './config.js';

export interface RolloutOptions<Example> {
  policy: TransformerLM;
  codec: TextCodec;
  /** One fresh environment per trajectory. */
  makeEnv: () => AgentEnv<Example>;
  examples: readonly Example[];
  /** Trajectories per example (a GRPO/RLOO group). */
  samplesPerExample: number;
  limits: RolloutLimits;
  sampling: RolloutSampling;
  /** Token ids that end an action (e.g. <eos>). */
  stopTokens: readonly number[];
  /** Text that ends an action when the decoded action ends with it (e.g. '</search>', '</answer>'). */
  stopStrings: readonly string[];
  generator: Generator;
  /**
   * Hears each sampled token and each turn as it ends, in order (e.g. to stream an answer to a page);
   * awaited, so a listener may yield to an event loop. It sees the trajectories, it must not change them.
   */
  onEvent?: (event: RolloutEvent) => void | Promise<void>;
}

/** What `onEvent` hears; `trajectory` is the index in the returned array (example-major). */
export type RolloutEvent =
  | { type: 'token'; trajectory: number; token: number }
  | { type: 'turn'; trajectory: number; turn: TurnSpan; step: StepResult; finished: boolean };

interface Row<Example> {
  env: AgentEnv<Example>;
  traj: Trajectory;
  sampling: RolloutSampling;
  /** Tokens of the action being generated. */
  action: number[];
  actionStart: number;
  finished: boolean;
}

function finish(row: Row<unknown>, reason: FinishReason): void {
  row.finished = true;
  row.traj.finishReason = reason;
}

/** Runs every example `samplesPerExample` times to the end of its episode. */
export async function rollout<Example>(o: RolloutOptions<Example>): Promise<Trajectory[]> {
  const { limits, codec } = o;
  const greedySamples = o.sampling.greedySamples ?? 0;
  if (greedySamples > o.samplesPerExample)
    throw new Error(
      `rollout: greedySamples (${greedySamples}) must not exceed the samples per example (${o.samplesPerExample})`,
    );
  const greedy = { ...o.sampling, greedy: true };
  const rows: Row<Example>[] = [];
  for (const [group, example] of o.examples.entries()) {
    for (let s = 0; s < o.samplesPerExample; s++) {
      const env = o.makeEnv();
      const prompt = codec.encode(await env.reset(example));
      if (prompt.length >= limits.maxLength) {
        throw new Error(
          `rollout: prompt of example ${group} has ${prompt.length} tokens, not below rollout maxLength ${limits.maxLength}`,
        );
      }
      const traj = startTrajectory(group, prompt);
      const sampling = s < greedySamples ? greedy : o.sampling;
      rows.push({ env, traj, sampling, action: [], actionStart: prompt.length, finished: false });
    }
  }
  // Cache row s holds rows[slots[s]]; finished rows are dropped from the cache once they are half of it.
  let cache = o.policy.createCache(rows.length, limits.maxLength);
  let slots = rows.map((_, b) => b);
  try {
    let pending: number[][] = rows.map((r) => r.traj.tokens);
    while (rows.some((r) => !r.finished)) {
      const logits = await extendAsync(o.policy, cache, pending);
      pending = slots.map(() => []);
      // One draw per trajectory, whatever rows the cache holds, so that compaction changes no sample.
      const draws = rand([rows.length], { generator: o.generator, dtype: 'float64', device: 'cpu' });
      const u = draws.dataSync();
      draws.dispose();
      const ended: number[] = [];
      for (const [s, b] of slots.entries()) {
        const row = rows[b];
        const rowLogits = logits[s];
        if (row.finished || !rowLogits) continue;
        const { token, logprob } = sampleToken(rowLogits, u[b], row.sampling);
        // A NaN logit makes the draw meaningless and its log-prob NaN, which would reach the loss: stop here,
        // where the trajectory and position can still be named (a numerical fault in the policy).
        if (!Number.isFinite(logprob))
          throw new Error(
            `rollout: the policy's logits for trajectory ${b} (example ${row.traj.group}) after ${row.traj.tokens.length} tokens are not finite; the sampled token's log-prob is ${logprob}`,
          );
        row.action.push(token);
        row.traj.tokens.push(token);
        row.traj.actionMask.push(1);
        row.traj.logprobs.push(logprob);
        pending[s] = [token];
        if (o.onEvent) await o.onEvent({ type: 'token', trajectory: b, token });
        const stopped =
          o.stopTokens.includes(token) ||
          row.action.length >= limits.maxTokensPerTurn ||
          row.traj.tokens.length >= limits.maxLength ||
          (o.stopStrings.length > 0 && endsWithAny(codec.decode(row.action), o.stopStrings));
        if (stopped) ended.push(s);
      }
      const results = await Promise.all(
        ended.map((s) => {
          const { env, action } = rows[slots[s]];
          return env.step(codec.decode(action), action);
        }),
      );
      ended.forEach((s, i) => {
        pending[s] = closeTurn(rows[slots[s]], results[i], pending[s], limits, codec);
      });
      if (o.onEvent)
        for (const [i, s] of ended.entries()) {
          const row = rows[slots[s]];
          const turn = row.traj.turns.at(-1)!;
          await o.onEvent({
            type: 'turn',
            trajectory: slots[s],
            turn,
            step: results[i],
            finished: row.finished,
          });
        }
      const live = slots.flatMap((b, s) => (rows[b].finished ? [] : [s]));
      if (live.length > 0 && live.length <= slots.length / 2) {
        const compact = cache.gather(live);
        cache.dispose();
        cache = compact;
        pending = live.map((s) => pending[s]);
        slots = live.map((s) => slots[s]);
      }
    }
  } finally {
    cache.dispose();
  }
  return rows.map((r) => r.traj);
}

function endsWithAny(text: string, suffixes: readonly string[]): boolean {
  return suffixes.some((s) => text.endsWith(s));
}

/**
 * Records the environment's answer to a finished action: rewards at the action's last token, tool calls,
 * the turn span, and the observation tokens (cut to the limits), which are returned to be appended to the
 * cache after the action's last token.
 */
function closeTurn<Example>(
  row: Row<Example>,
  result: StepResult,
  pending: number[],
  limits: RolloutLimits,
  codec: TextCodec,
): number[] {
  const { traj } = row;
  const turn = traj.turns.length;
  const lastActionToken = traj.tokens.length - 1;
  for (const r of result.rewards)
    traj.rewards.push({ position: lastActionToken, value: r.value, kind: r.kind });
  for (const call of result.toolCalls) traj.toolCalls.push({ ...call, turn });
  Object.assign(traj.info, result.info);
  const observationStart = traj.tokens.length;
  let observation: number[] = [];
  if (!result.done && result.observation !== null) {
    // Leave room for at least one more action token after the observation.
    const room = limits.maxLength - traj.tokens.length - 1;
    observation = codec
      .encode(result.observation)
      .slice(0, Math.max(0, Math.min(limits.maxObservationTokens, room)));
    for (const t of observation) {
      traj.tokens.push(t);
      traj.actionMask.push(0);
      traj.logprobs.push(0);
    }
  }
  traj.turns.push({
    actionStart: row.actionStart,
    actionEnd: lastActionToken + 1,
    observationStart,
    observationEnd: traj.tokens.length,
  });
  row.action = [];
  row.actionStart = traj.tokens.length;
  if (result.done) finish(row, 'done');
  else if (traj.turns.length >= limits.maxTurns) finish(row, 'max_turns');
  else if (traj.tokens.length >= limits.maxLength - 1) finish(row, 'max_length');
  return row.finished ? [] : [...pending, ...observation];
}

/**
 * Runs one episode on text alone (no tokenizer, no model): a policy maps the context so far to its next
 * action. For scripted policies, evaluation of external agents, demonstrations and tests.
 */
import type { AgentEnv, StepResult } from './env.js';
import type { RewardKind, ToolCallRecord } from './trajectory.js';

export type TextPolicy = (context: string) => string | Promise<string>;

export interface TextEpisode {
  prompt: string;
  /** Prompt, actions and observations, concatenated as the policy saw them. */
  context: string;
  actions: string[];
  observations: (string | null)[];
  /** Every reward, with the turn whose action earned it. */
  rewards: { turn: number; value: number; kind: RewardKind }[];
  toolCalls: ToolCallRecord[];
  done: boolean;
  info: Record<string, unknown>;
  total: number;
}

export async function runTextEpisode<Example>(
  env: AgentEnv<Example>,
  example: Example,
  policy: TextPolicy,
  options: { maxSteps?: number } = {},
): Promise<TextEpisode> {
  const maxSteps = options.maxSteps ?? 64;
  const prompt = await env.reset(example);
  const ep: TextEpisode = {
    prompt,
    context: prompt,
    actions: [],
    observations: [],
    rewards: [],
    toolCalls: [],
    done: false,
    info: {},
    total: 0,
  };
  for (let turn = 0; turn < maxSteps && !ep.done; turn++) {
    const action = await policy(ep.context);
    const r: StepResult = await env.step(action, []);
    ep.actions.push(action);
    ep.observations.push(r.observation);
    ep.context += action + (r.done ? '' : (r.observation ?? ''));
    for (const x of r.rewards) ep.rewards.push({ turn, ...x });
    for (const c of r.toolCalls) ep.toolCalls.push({ turn, ...c });
    Object.assign(ep.info, r.info);
    ep.done = r.done;
  }
  ep.total = ep.rewards.reduce((s, x) => s + x.value, 0);
  return ep;
}

/**
 * How closely a policy imitates demonstrations, token by token: teacher-forced on each demonstration, the
 * negative log-likelihood of every action token and whether it is the policy's greedy (argmax) choice,
 * grouped by turn (`search 1`, `search 2`, `answer 1`: the call's opening tag and how many of those came
 * before) and by part of the action (`plan`: a `<think>…</think>` block before the call, `open`: the call's
 * opening tag, `first`: the token after it, `inside`: the rest, `close`: a closing tag that ends the
 * action). Greedy decoding reproduces a demonstration exactly when every one of its action tokens is the
 * greedy choice (`allGreedy`), so the groups with low accuracy are where greedy rollouts go wrong: e.g. a
 * name whose copy stops one piece early shows as `inside` tokens of the answer whose greedy choice was the
 * closing tag.
 */
import type { TransformerLM } from '@agent-r1/nn';
import { noGrad, tensor, tidy } from '@agent-r1/tensor';
import type { Trajectory } from '../mdp/trajectory.js';
import type { TextCodec } from '../rollout/config.js';

export type ActionPart = 'plan' | 'open' | 'first' | 'inside' | 'close';

export interface ImitationGroup {
  turn: string;
  part: ActionPart;
  tokens: number;
  /** Mean negative log-likelihood per token (nats). */
  nll: number;
  /** The fraction of tokens that are the greedy choice. */
  accuracy: number;
}

export interface ImitationReport {
  demonstrations: number;
  /** The fraction of demonstrations whose every action token is the greedy choice. */
  allGreedy: number;
  /** Over every action token. */
  nll: number;
  accuracy: number;
  /** Sorted by turn, then part in the order open, first, inside, close. */
  groups: ImitationGroup[];
}

const PARTS: readonly ActionPart[] = ['plan', 'open', 'first', 'inside', 'close'];

/** The part of an action of `length` tokens that token k is, given whether its last token closes a tag. */
function partOf(k: number, length: number, closes: boolean): ActionPart {
  if (k === 0) return 'open';
  if (k === length - 1 && closes) return 'close';
  return k === 1 ? 'first' : 'inside';
}

/**
 * The call an action makes: the name of its first opening tag other than a plan's `<think>` and that tag's
 * token index (`<think> country</think><search> …` → search at 3); 'untagged' at 0 where it has none.
 */
function callTag(action: readonly number[], codec: TextCodec): { name: string; at: number } {
  for (let k = 0; k < action.length; k++) {
    const name = /^<([\w-]+)>$/.exec(codec.decode(action.slice(k, k + 1)).trim())?.[1];
    if (name !== undefined && name !== 'think') return { name, at: k };
  }
  return { name: 'untagged', at: 0 };
}

/** One teacher-forced token: its negative log-likelihood, and the policy's greedy choice in its place. */
export interface ForcedToken {
  nll: number;
  likeliest: number;
}

/**
 * Teacher-forced on `tokens`, the policy's score of each token at `targets` (indices into `tokens`, each ≥ 1):
 * one forward pass over the tokens before the last target, with logits only where a target is predicted.
 */
export async function scoreTokens(
  policy: TransformerLM,
  tokens: readonly number[],
  targets: readonly number[],
): Promise<ForcedToken[]> {
  if (targets.length === 0) return [];
  const positions = targets.map((t) => t - 1);
  const inputs = Int32Array.from(tokens.slice(0, Math.max(...targets)));
  const logSoftmax = tidy(() =>
    noGrad(() =>
      policy
        .forward(tensor(inputs, { shape: [1, inputs.length], device: policy.config.device }), {
          positions: [positions],
          tokens: [inputs],
        })
        .logits.logSoftmax(-1),
    ),
  );
  let logprobs: ArrayLike<number>;
  try {
    logprobs = await logSoftmax.data();
  } finally {
    logSoftmax.dispose();
  }
  const V = logprobs.length / targets.length;
  return targets.map((t, q) => {
    let best = 0;
    for (let v = 1; v < V; v++) if (logprobs[q * V + v] > logprobs[q * V + best]) best = v;
    return { nll: -logprobs[q * V + tokens[t]], likeliest: best };
  });
}

/** Per action token of one trajectory: [turn label, part, nll, greedy?]. */
async function scoreTrajectory(
  policy: TransformerLM,
  traj: Trajectory,
  codec: TextCodec,
): Promise<[string, ActionPart, number, boolean][]> {
  const targets: number[] = [];
  for (let t = 1; t < traj.tokens.length; t++) if (traj.actionMask[t]) targets.push(t);
  const scores = await scoreTokens(policy, traj.tokens, targets);
  const seen = new Map<string, number>();
  const labels = traj.turns.map((turn) => {
    const { name, at } = callTag(traj.tokens.slice(turn.actionStart, turn.actionEnd), codec);
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    const last = codec.decode(traj.tokens.slice(turn.actionEnd - 1, turn.actionEnd)).trim();
    return { label: `${name} ${n}`, callAt: at, closes: /^<\/[\w-]+>$/.test(last) };
  });
  return targets.map((t, q) => {
    const i = traj.turns.findIndex((turn) => t >= turn.actionStart && t < turn.actionEnd);
    const turn = traj.turns[i];
    const { callAt, closes } = labels[i];
    const k = t - turn.actionStart;
    const part = k < callAt ? 'plan' : partOf(k - callAt, turn.actionEnd - turn.actionStart - callAt, closes);
    return [labels[i].label, part, scores[q].nll, scores[q].likeliest === traj.tokens[t]];
  });
}

/** The policy's imitation of the trajectories' action tokens (see the file comment). */
export async function imitationReport(
  policy: TransformerLM,
  trajectories: readonly Trajectory[],
  codec: TextCodec,
): Promise<ImitationReport> {
  const sums = new Map<
    string,
    { turn: string; part: ActionPart; tokens: number; nll: number; hits: number }
  >();
  let allGreedy = 0;
  for (const traj of trajectories) {
    const scored = await scoreTrajectory(policy, traj, codec);
    for (const [turn, part, tokenNll, greedy] of scored) {
      const key = `${turn}\u0000${part}`;
      const s = sums.get(key) ?? { turn, part, tokens: 0, nll: 0, hits: 0 };
      s.tokens++;
      s.nll += tokenNll;
      s.hits += greedy ? 1 : 0;
      sums.set(key, s);
    }
    if (scored.every(([, , , greedy]) => greedy)) allGreedy++;
  }
  const total = (key: 'tokens' | 'nll' | 'hits') => [...sums.values()].reduce((t, s) => t + s[key], 0);
  const [tokens, nll, hits] = [total('tokens'), total('nll'), total('hits')];
  const groups = [...sums.values()]
    .map((s) => ({
      turn: s.turn,
      part: s.part,
      tokens: s.tokens,
      nll: s.nll / s.tokens,
      accuracy: s.hits / s.tokens,
    }))
    .sort((a, b) => a.turn.localeCompare(b.turn) || PARTS.indexOf(a.part) - PARTS.indexOf(b.part));
  const n = trajectories.length;
  return {
    demonstrations: n,
    allGreedy: n > 0 ? allGreedy / n : 0,
    nll: tokens > 0 ? nll / tokens : 0,
    accuracy: tokens > 0 ? hits / tokens : 0,
    groups,
  };
}

/** The report as a markdown table. */
export function imitationTable(report: ImitationReport): string {
  const lines = [
    `${report.demonstrations} demonstrations; every action token greedy in ${report.allGreedy.toFixed(3)}; ` +
      `all action tokens: NLL ${report.nll.toFixed(3)}, greedy ${report.accuracy.toFixed(3)}`,
    '',
    '| turn | part | tokens | NLL | greedy |',
    '| --- | --- | ---: | ---: | ---: |',
  ];
  for (const g of report.groups)
    lines.push(`| ${g.turn} | ${g.part} | ${g.tokens} | ${g.nll.toFixed(3)} | ${g.accuracy.toFixed(3)} |`);
  return lines.join('\n');
}

import { TransformerLM } from '@agent-r1/nn';
import { Generator, full, logprobs, noGrad, tensor, tidy } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import type { AgentEnv, StepResult } from '../src/mdp/env.js';
import { type RolloutEvent, rollout } from '../src/rollout/engine.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz <>/.!?0123456789';
const codec = {
  encode: (text: string) => Array.from(text, (c) => Math.max(0, ALPHABET.indexOf(c))),
  decode: (ids: ArrayLike<number>) => Array.from(ids, (i) => ALPHABET[i] ?? '?').join(''),
};
const policy = new TransformerLM({
  vocabSize: ALPHABET.length,
  dModel: 16,
  layers: 2,
  heads: 2,
  maxLength: 96,
  seed: 1,
});

/** Answers each action with "<ok>" and ends after `turns` actions, rewarding the last one. */
class EchoEnv implements AgentEnv<string> {
  private turn = 0;
  constructor(protected turns: number) {}
  reset(question: string): string {
    return `q ${question} `;
  }
  async step(actionText: string): Promise<StepResult> {
    this.turn++;
    const done = this.turn >= this.turns;
    return {
      observation: done ? null : ' <ok> ',
      rewards: done ? [{ value: 1, kind: 'outcome' }] : [{ value: 0.1, kind: 'process' }],
      done,
      toolCalls: done ? [] : [{ name: 'echo', args: actionText, content: 'ok', success: true }],
      info: { lastAction: actionText },
    };
  }
}

const base = {
  policy,
  codec,
  examples: ['abc', 'hello there'],
  samplesPerExample: 2,
  limits: { maxTurns: 5, maxTokensPerTurn: 6, maxLength: 90, maxObservationTokens: 10 },
  sampling: { temperature: 1 },
  stopTokens: [ALPHABET.indexOf('.')],
  stopStrings: ['!!'],
};

describe('rollout', () => {
  it('keeps masks, turn spans, rewards and groups consistent', async () => {
    const trajs = await rollout({ ...base, makeEnv: () => new EchoEnv(3), generator: new Generator(1) });
    expect(trajs.map((t) => t.group)).toEqual([0, 0, 1, 1]);
    for (const t of trajs) {
      expect(t.tokens.length).toBe(t.actionMask.length);
      expect(t.actionMask.slice(0, t.promptLength).every((m) => m === 0)).toBe(true);
      expect(t.turns).toHaveLength(3);
      expect(t.finishReason).toBe('done');
      for (const [k, turn] of t.turns.entries()) {
        const action = t.actionMask.slice(turn.actionStart, turn.actionEnd);
        expect(action.every((m) => m === 1) && action.length > 0 && action.length <= 6).toBe(true);
        const obs = t.tokens.slice(turn.observationStart, turn.observationEnd);
        expect(codec.decode(obs)).toBe(k < 2 ? ' <ok> ' : '');
        expect(t.actionMask.slice(turn.observationStart, turn.observationEnd).every((m) => m === 0)).toBe(
          true,
        );
      }
      expect(t.rewards.map((r) => [r.position, r.value])).toEqual(
        t.turns.map((s, k) => [s.actionEnd - 1, k < 2 ? 0.1 : 1]),
      );
      expect(t.toolCalls.map((c) => c.turn)).toEqual([0, 1]);
    }
  });

  it('tells each sampled token and each ended turn as they happen, and samples the same with a listener', async () => {
    const events: RolloutEvent[] = [];
    const heard = await rollout({
      ...base,
      makeEnv: () => new EchoEnv(3),
      generator: new Generator(4),
      // Async, as a page's listener is (it yields to paint): the rollout waits for it.
      onEvent: async (event) => {
        await new Promise((resolve) => setTimeout(resolve, 0));
        events.push(event);
      },
    });
    const quiet = await rollout({ ...base, makeEnv: () => new EchoEnv(3), generator: new Generator(4) });
    expect(heard.map((t) => t.tokens)).toEqual(quiet.map((t) => t.tokens));
    for (const [b, t] of heard.entries()) {
      const mine = events.filter((e) => e.trajectory === b);
      const tokens = mine.flatMap((e) => (e.type === 'token' ? [e.token] : []));
      expect(tokens).toEqual(t.tokens.filter((_, i) => t.actionMask[i] === 1));
      const turns = mine.flatMap((e) => (e.type === 'turn' ? [e] : []));
      expect(turns.map((e) => e.turn)).toEqual(t.turns);
      expect(turns.map((e) => e.finished)).toEqual([false, false, true]);
      expect(turns.map((e) => e.step.done)).toEqual([false, false, true]);
      // A turn is told after its last token and before the next action's first.
      const order = mine.map((e) => e.type);
      for (const [i, type] of order.entries()) if (type === 'turn') expect(order[i - 1]).toBe('token');
    }
  });

  it('records behaviour log-probs equal to a full forward pass over the final tokens', async () => {
    const trajs = await rollout({ ...base, makeEnv: () => new EchoEnv(3), generator: new Generator(2) });
    for (const t of trajs) {
      const recomputed = tidy(() => {
        const ids = tensor([t.tokens.slice(0, -1)], { dtype: 'int32' });
        const targets = tensor([t.tokens.slice(1)], { dtype: 'int32' });
        return Array.from(logprobs(policy.forward(ids).logits, targets).dataSync());
      });
      for (let i = t.promptLength; i < t.tokens.length; i++) {
        if (t.actionMask[i]) expect(Math.abs(t.logprobs[i] - recomputed[i - 1])).toBeLessThan(1e-4);
        else expect(t.logprobs[i]).toBe(0);
      }
    }
  });

  it('a batch gives each example the trajectory it gets alone (greedy; rows end at different turns, finished rows leave the cache)', async () => {
    // Episodes of 1 to 4 turns: rows finish at different steps, so the cache is compacted along the way,
    // and observations arrive while other rows decode, so extend takes its separate pass for them.
    class VaryingEnv extends EchoEnv {
      constructor() {
        super(0);
      }
      override reset(question: string): string {
        this.turns = (question.length % 4) + 1;
        return super.reset(question);
      }
    }
    const examples = ['a', 'bb', 'ccc', 'dddd', 'eeeee', 'ffffff', 'ggggggg', 'h'];
    const options = {
      ...base,
      examples,
      samplesPerExample: 1,
      sampling: { temperature: 0, greedy: true },
      makeEnv: () => new VaryingEnv(),
      generator: new Generator(4),
    };
    const batched = await rollout(options);
    for (const [i, example] of examples.entries()) {
      const [alone] = await rollout({ ...options, examples: [example] });
      expect(batched[i].tokens).toEqual(alone.tokens);
      expect(batched[i].turns).toEqual(alone.turns);
      for (const [k, lp] of alone.logprobs.entries()) expect(batched[i].logprobs[k]).toBeCloseTo(lp, 5);
    }
    expect(new Set(batched.map((t) => t.turns.length)).size).toBeGreaterThan(2);
  });

  it('greedySamples: the first samples of each group are the greedy trajectory, the rest as sampled without it', async () => {
    const examples = ['abc', 'hello there', 'xyz'];
    const options = { ...base, examples, samplesPerExample: 3, makeEnv: () => new EchoEnv(3) };
    const mixed = await rollout({
      ...options,
      sampling: { temperature: 1, greedySamples: 1 },
      generator: new Generator(5),
    });
    const sampled = await rollout({ ...options, generator: new Generator(5) });
    const greedy = await rollout({
      ...options,
      samplesPerExample: 1,
      sampling: { temperature: 0, greedy: true },
      generator: new Generator(9),
    });
    expect(mixed.map((t) => t.group)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2]);
    for (const [i, t] of mixed.entries()) {
      // One draw per trajectory whatever the others do: the sampled rows are those of a run without it.
      const want = i % 3 === 0 ? greedy[i / 3] : sampled[i];
      expect(t.tokens).toEqual(want.tokens);
    }
    // The greedy rows differ from what sampling gave those rows.
    expect(
      mixed.filter((t, i) => i % 3 === 0 && t.tokens.join() !== sampled[i].tokens.join()).length,
    ).toBeGreaterThan(0);
    await expect(
      rollout({ ...options, sampling: { temperature: 1, greedySamples: 4 }, generator: new Generator(5) }),
    ).rejects.toThrow(/greedySamples \(4\) must not exceed the samples per example \(3\)/);
  });

  it('is reproducible from the seed', async () => {
    const run = () => rollout({ ...base, makeEnv: () => new EchoEnv(2), generator: new Generator(7) });
    const [a, b] = [await run(), await run()];
    expect(a.map((t) => t.tokens)).toEqual(b.map((t) => t.tokens));
  });

  it('enforces maxTurns, maxLength and the observation limit', async () => {
    const turns = await rollout({
      ...base,
      limits: { ...base.limits, maxTurns: 2 },
      makeEnv: () => new EchoEnv(10),
      generator: new Generator(3),
    });
    expect(turns.every((t) => t.turns.length === 2 && t.finishReason === 'max_turns')).toBe(true);
    const short = await rollout({
      ...base,
      limits: { ...base.limits, maxLength: 24, maxObservationTokens: 3 },
      makeEnv: () => new EchoEnv(10),
      generator: new Generator(3),
    });
    for (const t of short) {
      expect(t.tokens.length).toBeLessThanOrEqual(24);
      expect(t.finishReason).toBe('max_length');
      for (const s of t.turns) expect(s.observationEnd - s.observationStart).toBeLessThanOrEqual(3);
    }
  });

  it('stops at a NaN in the policy, naming the trajectory, rather than sampling from it', async () => {
    const broken = new TransformerLM({ ...policy.config, seed: 1 });
    const [weight] = broken.parameters();
    noGrad(() => weight.copy_(full(weight.shape, Number.NaN)));
    await expect(
      rollout({ ...base, policy: broken, makeEnv: () => new EchoEnv(1), generator: new Generator(1) }),
    ).rejects.toThrow(
      /logits for trajectory 0 \(example 0\) after 6 tokens are not finite; the sampled token's log-prob is NaN/,
    );
  });

  it('rejects a prompt longer than the limit, naming the example', async () => {
    await expect(
      rollout({
        ...base,
        limits: { ...base.limits, maxLength: 5 },
        makeEnv: () => new EchoEnv(1),
        generator: new Generator(1),
      }),
    ).rejects.toThrow(/prompt of example 0 has 6 tokens/);
  });
});
